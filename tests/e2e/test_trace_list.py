"""/traces in Chromium as Sentry's trace explorer lists traces (issue 36, item 9): a console page view is
one row, named after the browser's page load, with the page's on_load inside it as `TracesState.load`
and Reflex's own events (hydrate_and_load, on_load_internal, set_is_hydrated) folded under it, never
rows of their own; its trace page names them the same way."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.e2e.app_server import AppServer
from tests.e2e.helpers import open_page

WAIT_MS = 30_000  # the page load is sent once the page is idle, then stored, then a refresh shows it
REFLEX_INTERNALS = ["State.hydrate_and_load", "OnLoadInternalState.on_load_internal", "OnLoadInternalState.set_is_hydrated"]


def test_a_page_view_is_one_row_named_after_its_page_load_with_its_handler_inside(app_server: AppServer, page: Page) -> None:
    open_page(page, app_server, "/traces")
    trace_id = page.evaluate("() => window.lookout._trace.t")  # the page load's trace (the loader's)
    # The page lists its own view once its page load is stored (a live page: refreshed every 2 s).
    view = page.locator(".trace-row", has=page.locator(f'.trace-name[href$="{trace_id}"]'))
    expect(view.locator(".trace-name")).to_have_text(re.compile(r"^/traces/?$"), timeout=WAIT_MS)
    expect(view).to_have_count(1)  # one row for the whole trace
    expect(view.locator(".trace-child .trace-child-name")).to_have_text(["↳ TracesState.load"])
    expect(view.locator(".trace-count")).to_have_text("5")  # the page load, the on_load and Reflex's three
    expect(page.locator(".trace-name", has_text=re.compile(r"^(reflex|app)\."))).to_have_count(0)  # nothing by module path
    # Reflex's own events: folded under the page load.
    internals = view.locator(".trace-internal .trace-child-name")
    expect(internals.first).to_be_hidden()
    view.locator(".trace-internals-toggle").click()
    expect(internals).to_have_text([f"↳ {name}" for name in REFLEX_INTERNALS])
    page.wait_for_timeout(2_500)  # a refresh of the list keeps the fold open
    expect(internals.first).to_be_visible()

    view.locator(".trace-name").click()
    expect(page.locator("#trace-id")).to_have_text(trace_id, timeout=WAIT_MS)
    labels = page.locator(".waterfall-label")
    expect(labels.filter(has_text=re.compile(r"^TracesState\.load$"))).to_have_count(1)
    for name in REFLEX_INTERNALS:
        expect(labels.filter(has_text=re.compile(f"^{re.escape(name)}$"))).to_have_count(1)
    expect(labels.filter(has_text=re.compile(r"^(reflex|app)\."))).to_have_count(0)
