"""The real @sentry/react in the built app, in Chromium: what reaches the tunnel, per setting.

The app runs in local mode, so every envelope the SDK sends is stored in the outbox, where
`outbox` (tests/e2e/captured.py) reads it back.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import time

import pytest
from playwright.sync_api import Page, Route, expect

from app.settings import Settings
from reflex_lookout.browser import CONFIG_ELEMENT_ID, browser_config
from tests.e2e.app_server import AppServer
from tests.e2e.captured import Outbox, messages
from tests.e2e.helpers import open_page
from tests.e2e.local_dsn import local_dsn


def expected_config(app_server: AppServer) -> dict:
    """The e2e server runs `reflex run --env prod` with the default settings (so the environment is
    "production", as the server SDK's), and the local DSN's key from its database."""
    env = {"REFLEX_ENV_MODE": "prod"}
    settings = dataclasses.replace(Settings.from_env(env), local_dsn=local_dsn(app_server))
    return browser_config(settings, settings.reporting_dsn)


def events_with(outbox: Outbox, text: str, after: int, timeout: float = 15) -> list[dict]:
    return outbox.wait_for("event", lambda event: any(text in m for m in messages(event)), after, timeout)


@pytest.mark.parametrize("path", ["/", "/try", "/no/such/page"])
def test_every_page_carries_the_configuration_the_sdk_was_started_with(
    app_server: AppServer, page: Page, path: str
) -> None:
    page.goto(app_server.url + path)
    page.wait_for_function("() => window.lookout !== undefined")
    shown = json.loads(page.locator(f"#{CONFIG_ELEMENT_ID}").first.text_content() or "")
    assert shown == expected_config(app_server) == page.evaluate("() => window.lookout.config")
    assert shown["tunnel"] == "/monitoring" and shown["dsn"] == str(local_dsn(app_server))  # the key in the database
    assert local_dsn(app_server).public_key != "lookout"  # random per install, not the old public key
    assert (shown["tracesSampleRate"], shown["maxBreadcrumbs"], shown["transportBufferSize"]) == (1, 100, 64)
    assert (shown["idleTimeoutMs"], shown["finalTimeoutMs"], shown["childSpanTimeoutMs"]) == (1000, 30000, 15000)


@pytest.mark.parametrize(
    ("button", "text"),
    [
        ("try-thrown", "Lookout try: a thrown error"),
        ("try-rejection", "Lookout try: an unhandled rejection"),
        ("try-script", "lookoutTryMissingFunction is not defined"),
        ("try-report", "Lookout try: a reported error"),
    ],
)
def test_each_error_path_reaches_the_tunnel_exactly_once(
    app_server: AppServer, page: Page, outbox: Outbox, button: str, text: str
) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.click(f"#{button}")
    expect(page.locator("#try-confirmation")).to_contain_text("sent as event", timeout=10_000)
    assert len(events_with(outbox, text, after)) == 1
    time.sleep(1.5)  # a second copy (e.g. through Reflex's own error handler) would have arrived by now
    found = [c for c in outbox.envelopes(after) if any(text in m for e in c.payloads("event") for m in messages(e))]
    assert len(found) == 1
    assert found[0].header["dsn"] == str(local_dsn(app_server))
    event_id = page.locator("#try-confirmation").text_content().split("event ")[1].rstrip(".")
    assert found[0].payloads("event")[0]["event_id"] == event_id


def test_a_render_error_is_reported_once_and_the_page_offers_a_retry(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.click("#try-render")
    expect(page.locator("#error-fallback-title")).to_be_visible(timeout=10_000)
    # The error page: the console's navigation, and what became of the error.
    expect(page.locator("#lookout-plain-header")).to_contain_text("Issues")
    expect(page.locator("#error-fallback-reported")).to_contain_text("The error has been reported")
    assert len(events_with(outbox, "Lookout try: a render error", after)) == 1
    time.sleep(1.5)
    assert len(events_with(outbox, "Lookout try: a render error", after, timeout=0)) == 1
    page.click("#error-fallback-retry")
    expect(page.locator("#try-render")).to_be_visible()
    expect(page.locator("#try-confirmation")).to_contain_text("Break rendering:")


def test_the_error_pages_links_load_their_page(app_server: AppServer, page: Page) -> None:
    """A client-side navigation would leave the boundary showing its page: each link loads its own."""
    open_page(page, app_server, "/try")
    page.click("#try-render")
    expect(page.locator("#error-fallback-title")).to_be_visible(timeout=10_000)
    page.click("#error-fallback-issues")
    expect(page).to_have_url(re.compile(r"/issues/?$"))
    expect(page.locator("#page-title")).to_have_text("Issues", timeout=15_000)
    expect(page.locator("#error-fallback-title")).to_have_count(0)


def test_fail_in_on_load_says_which_event_reported_it_and_replaces_the_last_line(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    """The on_load handler's script throws in the browser: Reflex hands it to window.onerror and
    shows nothing, so the page's status line says what happened, with the event's id."""
    open_page(page, app_server, "/try")
    page.click("#try-report")
    confirmation = page.locator("#try-confirmation")
    expect(confirmation).to_contain_text("Report an error: sent as event", timeout=10_000)
    after = outbox.mark()
    page.click("#try-on-load")
    expect(confirmation).not_to_contain_text("Report an error", timeout=10_000)
    expect(confirmation).to_contain_text("Fail in on_load (its script threw in the browser): sent as event", timeout=10_000)
    [event] = events_with(outbox, "Lookout try: an on_load script error", after)
    assert (confirmation.text_content() or "").split("event ")[1].rstrip(".") == event["event_id"]


def test_a_log_line_arrives_as_a_log_item(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.click("#try-log")
    logs = outbox.wait_for("log", lambda batch: any(
        item.get("body") == "Lookout try: a log line" for item in batch.get("items", [])
    ), after)
    assert logs, "no log item arrived"


def test_breadcrumbs_are_capped_at_100(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.evaluate("""() => {
        for (let i = 0; i < 150; i++) console.info('crumb ' + i);
        window.lookout.captureException(new Error('Lookout test: breadcrumbs'));
    }""")
    [event] = events_with(outbox, "Lookout test: breadcrumbs", after)
    crumbs = event["breadcrumbs"] if isinstance(event["breadcrumbs"], list) else event["breadcrumbs"]["values"]
    assert len(crumbs) == 100
    assert crumbs[-1]["message"] == "crumb 149"  # the newest are kept


def test_noise_is_dropped_while_an_ordinary_error_right_after_arrives(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    noise = [
        "Script error", "Script error.", "Javascript error: Script error on line 0",
        "ResizeObserver loop completed with undelivered notifications.", "ResizeObserver loop limit exceeded",
        "Can't find variable: _AutofillCallbackHandler",
    ]
    page.evaluate("""(noise) => {
        for (const message of noise) setTimeout(() => { throw new Error(message); }, 0);
        setTimeout(() => { throw new Error('Lookout test: ordinary error after the noise'); }, 50);
    }""", noise)
    assert len(events_with(outbox, "Lookout test: ordinary error after the noise", after)) == 1
    time.sleep(1)
    everything = [m for event in outbox.items("event", after) for m in messages(event)]
    assert not [m for m in everything if m in noise], everything


def test_a_deep_stack_keeps_at_most_50_frames_and_skips_long_lines(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.evaluate("""() => {
        const deep = (n) => { if (n === 0) throw new Error('Lookout test: deep'); return deep(n - 1) + 1; };
        setTimeout(() => deep(70), 0);
        const name = 'lookoutLongName' + 'x'.repeat(1100);  // a stack line over 1024 characters
        const long = { [name]: function () { throw new Error('Lookout test: long line'); } }[name];
        setTimeout(() => long(), 0);
    }""")
    [deep] = events_with(outbox, "Lookout test: deep", after)
    frames = deep["exception"]["values"][-1]["stacktrace"]["frames"]
    assert 40 <= len(frames) <= 50
    [long] = events_with(outbox, "Lookout test: long line", after)
    long_frames = long["exception"]["values"][-1]["stacktrace"]["frames"]
    assert long_frames, "the other frames are kept"
    assert not [f for f in long_frames if "lookoutLongName" in (f.get("function") or "")]


def transactions(outbox: Outbox, after: int, op: str, name: str, timeout: float = 15) -> list[dict]:
    return outbox.wait_for(
        "transaction",
        lambda t: t["contexts"]["trace"].get("op") == op and t.get("transaction") == name,
        after,
        timeout,
    )


def test_page_loads_and_navigations_are_transactions_named_after_the_route(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    after = outbox.mark()
    open_page(page, app_server, "/")
    [pageload] = transactions(outbox, after, "pageload", "/")
    data = pageload["contexts"]["trace"]["data"]
    assert data["sentry.sample_rate"] == 1 and data["lookout.rendered"] is True
    assert data["sentry.idle_span_finish_reason"] == "idleTimeout"
    assert pageload["transaction_info"]["source"] == "route"
    page.click("#lookout-header a[href='/try']")
    expect(page.locator("#try-render")).to_be_visible()
    [navigation] = transactions(outbox, after, "navigation", "/try")
    assert navigation["contexts"]["trace"]["data"]["lookout.route_id"].endswith("_index")


def test_the_not_found_route_sends_no_transaction(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    after = outbox.mark()
    page.goto(app_server.url + "/no/such/page")
    expect(page.locator("#not-found-title")).to_be_visible()
    page.wait_for_timeout(2500)  # past the idle timeout: a transaction would have been sent
    page.goto(app_server.url + "/")  # this one is sent (and flushes anything before it)
    transactions(outbox, after, "pageload", "/")
    sent = outbox.items("transaction", after)
    assert [t["transaction"] for t in sent if t["contexts"]["trace"]["op"] == "pageload"] == ["/"]


class RouteChunk:
    """Holds back requests for the /try route's module (Vite names it `_try_._index-*.js`; the
    link's prefetch and the navigation's import both ask for it) until `release`. Holding, not
    sleeping: a handler that sleeps blocks Playwright."""

    PATTERN = "**/_try_._index-*.js"

    def __init__(self, page: Page) -> None:
        self.held: list[Route] = []
        self.holding = True
        page.route(self.PATTERN, self._hold)

    def _hold(self, route: Route) -> None:
        if self.holding:
            self.held.append(route)
        else:
            route.continue_()

    def release(self) -> None:
        self.holding = False
        for route in self.held:
            with contextlib.suppress(Exception):  # the page may have left meanwhile
                route.continue_()


def navigate_to_try_with_its_module_held(page: Page, app_server: AppServer, outbox: Outbox) -> tuple[int, RouteChunk]:
    """From `/`, click "Try it" while its module is held; a marker tells a full page load apart."""
    open_page(page, app_server, "/")
    after = outbox.mark()
    chunk = RouteChunk(page)
    page.evaluate("() => { window.lookoutStillHere = true; }")
    page.click("#lookout-header a[href='/try']")
    return after, chunk


def test_route_assets_late_past_the_timeout_mean_a_full_page_load_and_an_event(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    after, chunk = navigate_to_try_with_its_module_held(page, app_server, outbox)
    # The full page load starts at 3.8 s (the server may add a trailing slash).
    page.wait_for_url(re.compile(r".*/try/?$"), wait_until="commit", timeout=20_000)
    chunk.release()
    expect(page.locator("#try-render")).to_be_visible(timeout=20_000)
    assert page.evaluate("() => window.lookoutStillHere") is None  # a full page load, not client-side
    [event] = outbox.wait_for("event", lambda e: "did not load within 3800 ms" in " ".join(messages(e)), after)
    assert "Route assets for /try did not load within 3800 ms" in messages(event)
    assert event["breadcrumbs"], "the event carries the breadcrumbs leading to it"


def test_route_assets_in_time_mean_no_event_and_a_client_side_navigation(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    after, chunk = navigate_to_try_with_its_module_held(page, app_server, outbox)
    page.wait_for_timeout(1000)
    assert chunk.held, "the route's module was requested"
    chunk.release()
    expect(page.locator("#try-render")).to_be_visible(timeout=10_000)
    page.wait_for_timeout(4000)  # past the 3800 ms deadline
    assert page.evaluate("() => window.lookoutStillHere") is True
    assert not [e for e in outbox.items("event", after) if "did not load within" in " ".join(messages(e))]


def test_a_thrown_redirect_is_not_an_error(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    # What React Router's `redirect()` throws: a Response with a 3xx status.
    page.evaluate("""() => {
        Promise.reject(new Response(null, { status: 302, headers: { Location: '/' } }));
        setTimeout(() => { throw new Error('Lookout test: after the redirect'); }, 200);
    }""")
    assert len(events_with(outbox, "Lookout test: after the redirect", after)) == 1
    time.sleep(1)
    assert [messages(e) for e in outbox.items("event", after)] == [["Lookout test: after the redirect"]]


def navigations(outbox: Outbox, after: int) -> list[str]:
    return [t["transaction"] for t in outbox.items("transaction", after) if t["contexts"]["trace"]["op"] == "navigation"]


def test_a_navigation_abandoned_for_a_newer_one_sends_no_transaction(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/")
    after = outbox.mark()
    chunk = RouteChunk(page)
    page.click("#lookout-header a[href='/try']")  # waits for the held module
    page.wait_for_timeout(500)
    page.locator("#lookout-header a[href='/']").last.click()  # a newer navigation, to the overview
    expect(page.locator("#status-panel")).to_be_visible(timeout=10_000)
    chunk.release()
    transactions(outbox, after, "navigation", "/")
    page.wait_for_timeout(1500)
    assert navigations(outbox, after) == ["/"]


def test_a_navigation_left_before_its_route_rendered_sends_no_transaction(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/")
    after = outbox.mark()
    RouteChunk(page)  # never released
    page.click("#lookout-header a[href='/try']")
    page.wait_for_timeout(500)
    page.goto(app_server.url + "/try/slow")  # the user leaves with a full page load
    transactions(outbox, after, "pageload", "/try/slow")
    page.wait_for_timeout(1500)
    assert navigations(outbox, after) == []
