"""The console pages in Chromium: issues appear live, an issue resolves, regresses and is deleted,
hostile strings stay text, and other machines are refused."""

from __future__ import annotations

import json
import re
import uuid

import httpx
import pytest
from playwright.sync_api import Error as PlaywrightError, Page, expect

from plugin_support.envelopes import build
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import VIEWER, open_page, submit_sign_in
from tests.e2e.local_dsn import local_dsn
from tests.e2e.triage import issues_of
from tests.netns import Namespace


def report_from_the_try_page(page: Page, message: str) -> None:
    page.evaluate("(message) => window.lookout.captureException(new Error(message))", message)


def test_a_new_error_appears_without_reload_then_resolves_and_regresses(
    app_server: AppServer, page: Page
) -> None:
    message = f"Lookout console test {uuid.uuid4().hex[:8]}"
    page.goto(app_server.url + "/issues")
    expect(page.locator("#issues-table")).to_be_visible()
    trigger = page.context.new_page()
    open_page(trigger, app_server, "/try")
    report_from_the_try_page(trigger, message)
    row = page.locator(".issue-row", has_text=message)
    expect(row).to_be_visible(timeout=15_000)  # no reload: the list re-reads itself
    row.locator(".issue-title").click()
    expect(page.locator("#page-title")).to_have_text(f"Error: {message}")
    expect(page.locator("#issue-status")).to_have_text("unresolved")
    expect(page.locator(".stack-exception").first).to_have_text(f"Error: {message}")
    page.click("#issue-resolve")
    expect(page.locator("#issue-status")).to_have_text("resolved")
    open_page(trigger, app_server, "/try")  # a fresh page: the SDK's dedupe would drop a repeat
    report_from_the_try_page(trigger, message)
    page.wait_for_timeout(1500)  # the inbox reads the new event in
    page.reload()
    expect(page.locator("#issue-status")).to_have_text("regressed", timeout=10_000)
    expect(page.locator(".issue-change")).to_have_count(2)
    expect(page.locator("#issue-position")).to_have_text("1 of 2 stored")
    latest = page.locator("#issue-event-id").text_content()
    page.click("#issue-older")
    expect(page.locator("#issue-position")).to_have_text("2 of 2 stored")
    expect(page.locator("#issue-event-id")).not_to_have_text(latest or "")
    expect(page.locator("#issue-breakdown")).to_contain_text("100 %")
    page.click("#issue-delete")  # asks first
    page.click("#issue-delete-confirm")
    expect(page).to_have_url(app_server.url + "/issues")
    expect(page.locator("#issues-table")).to_be_visible()
    expect(page.locator(".issue-row", has_text=message)).to_have_count(0)
    answer = httpx.get(f"{app_server.url}/api/inbox/events/{latest}")
    assert answer.status_code == 404, answer.text


def test_hostile_strings_in_an_event_stay_text(app_server: AppServer, page: Page) -> None:
    marker = uuid.uuid4().hex[:8]
    hostile = f'<img src=x onerror="window.__lookoutXss=1"> {marker}'
    event = {
        "event_id": uuid.uuid4().hex, "level": "error", "platform": "javascript",
        "exception": {"values": [{"type": "<script>window.__lookoutXss=2</script>", "value": hostile,
                                  "stacktrace": {"frames": [{"function": "<b onmouseover=alert(1)>f</b>", "in_app": True}]}}]},
        "breadcrumbs": {"values": [{"message": "<script>window.__lookoutXss=3</script>", "timestamp": 1.0}]},
        "tags": {"evil": "<svg onload=window.__lookoutXss=4>"},
    }
    body = build(str(local_dsn(app_server)), [("event", json.dumps(event).encode())])
    assert httpx.post(app_server.url + "/monitoring", content=body, headers={"Origin": app_server.url}).status_code == 200
    issues_of(app_server, f"has:evil {marker}", 1)  # its tags counted (within a second of the event)
    page.goto(app_server.url + "/issues")
    row = page.locator(".issue-row", has_text=marker)
    expect(row).to_be_visible(timeout=15_000)
    row.locator(".issue-title").click()
    expect(page.locator("#page-title")).to_contain_text(hostile)  # shown, literally
    expect(page.locator("#issue-breadcrumbs")).to_contain_text("<script>window.__lookoutXss=3</script>")
    expect(page.locator("#issue-tags")).to_contain_text("<svg onload=window.__lookoutXss=4>")
    assert page.evaluate("() => window.__lookoutXss") is None
    assert page.locator("#issue-stack img, #issue-stack script, #issue-tags svg").count() == 0


def fetch_json(page: Page, path: str) -> tuple[int, dict]:
    """GET `path` from the page's browser, on the page's origin."""
    return tuple(page.evaluate("async (path) => { const r = await fetch(path); return [r.status, await r.json()]; }", path))


def test_other_machines_must_sign_in_and_viewers_only_read(
    app_server: AppServer, elsewhere: Namespace, page_elsewhere: Page
) -> None:
    page = page_elsewhere  # Chromium on another machine (a network namespace)
    probe = page.context.new_page()
    with pytest.raises(PlaywrightError, match="ERR_CONNECTION_REFUSED"):
        probe.goto(app_server.url + "/ping")  # 127.0.0.1 there is the other machine's own
    probe.close()
    elsewhere_url = app_server.url_at(elsewhere.host_address)
    page.goto(elsewhere_url + "/issues")
    expect(page.locator("#console-refused")).to_be_visible(timeout=15_000)
    status, refused = fetch_json(page, "/api/inbox/issues")
    assert status == 401 and "Sign in" in refused["detail"]
    expect(page.locator("#issues-table")).to_have_count(0)
    page.click("#console-sign-in")
    submit_sign_in(page, "not the password")
    expect(page.locator("#sign-in-problem")).to_be_visible()
    submit_sign_in(page)  # the form came back empty
    expect(page.locator("#console-viewer")).to_have_text(f"Signed in as {VIEWER} (viewer)", timeout=15_000)
    assert "lookout_session" not in page.evaluate("() => document.cookie")  # HttpOnly: scripts cannot read it
    row = page.locator(".issue-row").first
    expect(row).to_be_visible()
    row.locator(".issue-title").click()
    expect(page.locator("#issue-status")).to_be_visible()
    before = page.locator("#issue-status").text_content()
    page.click("#issue-delete")  # a viewer is not asked to confirm, but told why
    expect(page.get_by_text("Only a maintainer can delete an issue.")).to_be_visible()
    page.locator("#issue-resolve, #issue-reopen, #issue-unignore").first.click()
    expect(page.get_by_text("Only a maintainer can change an issue's status.")).to_be_visible()
    # The tab's events are handled in order: the answer to the delete came before this one.
    expect(page.locator("#issue-delete-confirm")).to_have_count(0)
    expect(page.locator("#issue-status")).to_have_text(before or "")
    page.goto(elsewhere_url + "/signin")
    page.click("#sign-out")
    expect(page).to_have_url(re.compile(re.escape(elsewhere_url) + r"/signin/?$"))
    page.goto(elsewhere_url + "/issues")
    expect(page.locator("#console-refused")).to_be_visible(timeout=15_000)


def test_the_slow_handler_shows_as_one_trace_from_click_to_sql(app_server: AppServer, page: Page) -> None:
    open_page(page, app_server, "/try")
    page.click("#try-backend-slow")
    expect(page.locator("#try-confirmation")).to_contain_text("Slow handler: done", timeout=10_000)
    page.wait_for_timeout(1500)  # the backend's transaction reaches the inbox
    page.goto(app_server.url + "/traces")
    row = page.locator(".trace-row", has_text="TryState.slow_work").first
    expect(row).to_be_visible(timeout=15_000)
    row.locator(".trace-name").click()
    labels = page.locator(".waterfall-label")
    # The browser's span for the click and the backend's transaction, both named after the handler.
    expect(labels.filter(has_text="TryState.slow_work")).to_have_count(2, timeout=10_000)
    expect(labels.filter(has_text="select count(*) from outbox")).to_have_count(1)
    expect(labels.filter(has_text="/ping")).to_have_count(1)
    # The browser's span for the click is in the same trace, above the backend's transaction.
    rows = list(zip(labels.all_text_contents(), page.locator(".waterfall-op").all_text_contents(), strict=True))
    assert rows.index(("TryState.slow_work", "ui.reflex.event")) < rows.index(("TryState.slow_work", "reflex.event"))


def test_log_lines_from_browser_and_backend_stream_into_the_logs_page(app_server: AppServer, page: Page) -> None:
    page.goto(app_server.url + "/logs")
    expect(page.locator("#logs-level")).to_be_visible()  # (the table has no height while empty)
    trigger = page.context.new_page()
    open_page(trigger, app_server, "/try")
    trigger.click("#try-backend-log")
    trigger.click("#try-log")
    for body in ("Lookout try: a backend log line (from an event handler)", "Lookout try: a log line"):
        expect(page.locator(".log-body", has_text=body).first).to_be_visible(timeout=20_000)  # no reload
