"""The loader before hydration and the SDK after it (issue #16), in Chromium against the built app:
what happens before the SDK arrives reaches the tunnel once, the SDK is fetched only after
interactive on a page with no error, and the first page's backend work is in its page-load trace."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import time
from typing import Any

from playwright.sync_api import Page, Route, expect

from tests.e2e.app_server import AppServer
from tests.e2e.captured import Outbox, messages
from tests.e2e.chromium import MARK_INTERACTIVE
from tests.e2e.helpers import open_page

INLINE_ERROR = "Lookout test: inline before modules"
# After the loader (in <head>), before the app's modules (the async module script ends <body>).
INLINE_SCRIPT = f"<script>function lookoutInlineBoom() {{ throw new Error('{INLINE_ERROR}'); }} lookoutInlineBoom();</script>"


def inject_inline_error(page: Page, app_server: AppServer, path: str, script: str = INLINE_SCRIPT) -> None:
    """Serve `path`'s HTML with a classic `script` (by default one that throws), right before `</head>`."""

    def rewrite(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace("</head>", script + "</head>", 1))

    page.route(app_server.url + path, rewrite)


def block_sdk(page: Page) -> None:
    """The SDK chunk never arrives: Chromium refuses its request (CDP Network.setBlockedURLs). Not
    `page.route`: a routed page's requests wait for Playwright, which drops them when the page closes,
    the loader's beacon among them."""
    session = page.context.new_cdp_session(page)
    session.send("Network.enable")
    session.send("Network.setBlockedURLs", {"urls": ["*/lookout_sdk-*"]})


def throw_when_parsed(page: Page, javascript: str) -> None:
    """Run `javascript` (which throws) when the document has been parsed (readyState "interactive"):
    after the loader in <head>, with no request routed through Playwright (see `block_sdk`)."""
    page.add_init_script(
        "document.addEventListener('readystatechange', function () {"
        f" if (document.readyState === 'interactive') {{ {javascript} }} }});"
    )


def sdk_requested_at(page: Page) -> float | None:
    return page.evaluate(
        "() => { const [e] = performance.getEntriesByType('resource').filter((r) => r.name.includes('/lookout_sdk-'));"
        " return e ? e.startTime : null; }"
    )


def inline_events(outbox: Outbox, after: int, timeout: float = 15) -> list[dict]:
    return outbox.wait_for("event", lambda e: any(INLINE_ERROR in m for m in messages(e)), after, timeout)


def test_an_inline_script_error_before_the_modules_arrives_once_with_its_stack_and_wakes_the_sdk(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    after = outbox.mark()
    page.add_init_script(MARK_INTERACTIVE)
    inject_inline_error(page, app_server, "/try")
    open_page(page, app_server, "/try")
    [event] = inline_events(outbox, after)
    frames = event["exception"]["values"][-1]["stacktrace"]["frames"]
    assert any(f.get("function") == "lookoutInlineBoom" for f in frames)
    assert event["exception"]["values"][-1]["mechanism"]["handled"] is False
    time.sleep(1.5)  # a second copy (the loader's beacon, a second replay) would be here by now
    assert len(inline_events(outbox, after, 0)) == 1
    # Woken by the error: the SDK was requested before the page was interactive.
    interactive = page.evaluate("() => window.__lookoutInteractiveAt")
    requested = sdk_requested_at(page)
    assert requested is not None and requested < interactive


def test_the_sdk_is_not_fetched_before_interactive_on_a_page_with_no_error(app_server: AppServer, page: Page) -> None:
    page.add_init_script(MARK_INTERACTIVE)
    open_page(page, app_server, "/try")
    interactive = page.evaluate("() => window.__lookoutInteractiveAt")
    requested = sdk_requested_at(page)
    assert interactive is not None and requested is not None and requested > interactive


def test_a_page_closed_before_the_sdk_arrived_still_delivers_its_error_once(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    after = outbox.mark()
    block_sdk(page)
    throw_when_parsed(page, f"function lookoutInlineBoom() {{ throw new Error('{INLINE_ERROR}'); }} lookoutInlineBoom();")
    page.goto(app_server.url + "/try", wait_until="commit")
    page.wait_for_function("() => window.lookout !== undefined && window.lookout.lastEventId() !== undefined")
    page.wait_for_timeout(50)
    page.close(run_before_unload=True)  # as a user closing the tab: pagehide fires
    [event] = inline_events(outbox, after)
    assert event["tags"]["lookout.sent_by"] == "loader" and event["sdk"]["name"] == "lookout.loader"
    assert any(f.get("function") == "lookoutInlineBoom" for f in event["exception"]["values"][-1]["stacktrace"]["frames"])
    time.sleep(1.5)
    assert len(inline_events(outbox, after, 0)) == 1


def test_the_first_pages_hydrate_and_on_load_are_in_the_page_load_trace_under_its_span(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    after = outbox.mark()
    open_page(page, app_server, "/")  # the home page has an on_load handler
    [pageload] = outbox.wait_for("transaction", lambda t: t["contexts"]["trace"].get("op") == "pageload", after)
    trace = pageload["contexts"]["trace"]
    loader_trace = page.evaluate("() => window.lookout._trace")
    assert (trace["trace_id"], trace["span_id"]) == (loader_trace["t"], loader_trace["s"])
    assert "parent_span_id" not in trace or not trace["parent_span_id"]  # the root of the page's trace
    backend = outbox.wait_for(
        "transaction",
        lambda t: t.get("platform") == "python" and t["contexts"]["trace"]["trace_id"] == trace["trace_id"],
        after,
    )
    [hydrate] = [t for t in backend if t["transaction"].endswith("hydrate_and_load")]
    # Its parent is the browser's page-load span: pageload → hydrate/on_load handler.
    assert hydrate["contexts"]["trace"]["parent_span_id"] == trace["span_id"]
    # Every backend transaction of the page (on_load's among them) chains back to the page-load span,
    # through the browser's event spans and the backend's own (events a handler sends on).
    for transaction in backend:
        assert root_span(transaction, [pageload, *backend]) == trace["span_id"], transaction["transaction"]
    assert [t for t in backend if t["transaction"].endswith("HomeState.load")]  # the page's on_load


def root_span(transaction: dict, transactions: list[dict]) -> str:
    """The span `transaction` hangs from, followed up through the spans of `transactions` to the top."""
    parents = {}
    for each in transactions:
        root = each["contexts"]["trace"]
        parents[root["span_id"]] = root.get("parent_span_id")
        parents.update({s["span_id"]: s.get("parent_span_id") for s in each.get("spans", [])})
    chain = [transaction["contexts"]["trace"]["span_id"]]
    while parents.get(chain[-1]) and len(chain) < 50:
        chain.append(parents[chain[-1]])
    return chain[-1]


def test_a_client_side_navigations_on_load_is_in_the_navigations_trace(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/try")
    page.wait_for_function("() => window.lookout.tracing === true")
    after = outbox.mark()
    page.click("#try-slow")  # /try/slow has an on_load handler (SlowState.load)
    expect(page.locator("#slow-loaded")).to_be_visible(timeout=15_000)
    [navigation] = outbox.wait_for("transaction", lambda t: t["contexts"]["trace"].get("op") == "navigation", after)
    trace = navigation["contexts"]["trace"]
    [load] = outbox.wait_for(
        "transaction", lambda t: t.get("platform") == "python" and t["transaction"].endswith("SlowState.load"), after,
    )
    assert load["contexts"]["trace"]["trace_id"] == trace["trace_id"]
    # navigation → Reflex's on_load_internal handler (which sends the page's on_load) → SlowState.load
    def in_trace(t: dict[str, Any]) -> bool:
        return t.get("platform") == "python" and t["contexts"]["trace"]["trace_id"] == trace["trace_id"]

    outbox.wait_for("transaction", lambda t: in_trace(t) and t["transaction"].endswith("on_load_internal"), after)
    backend = [t for t in outbox.items("transaction", after) if in_trace(t)]
    assert root_span(load, [navigation, *backend]) == trace["span_id"], [t["transaction"] for t in backend]


def test_a_rejection_before_the_sdk_arrives_once(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    text = "Lookout test: rejected before the SDK"
    after = outbox.mark()
    inject_inline_error(page, app_server, "/try", f"<script>Promise.reject(new Error('{text}'));</script>")
    open_page(page, app_server, "/try")
    [event] = outbox.wait_for("event", lambda e: any(text in m for m in messages(e)), after)
    assert event["exception"]["values"][-1]["mechanism"]["type"] == "auto.browser.global_handlers.onunhandledrejection"
    time.sleep(1.5)
    assert len(outbox.wait_for("event", lambda e: any(text in m for m in messages(e)), after, 0)) == 1


def test_noise_before_the_sdk_never_arrives_nor_wakes_it(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    after = outbox.mark()
    page.add_init_script(MARK_INTERACTIVE)
    inject_inline_error(page, app_server, "/try", "<script>throw new Error('ResizeObserver loop limit exceeded');</script>")
    open_page(page, app_server, "/try")
    assert page.evaluate("() => window.lookout._want") is None  # dropped by the loader: nothing recorded
    assert sdk_requested_at(page) > page.evaluate("() => window.__lookoutInteractiveAt")
    page.evaluate("() => window.lookout.captureException(new Error('Lookout test: after the noise'))")
    outbox.wait_for("event", lambda e: any("after the noise" in m for m in messages(e)), after)
    assert not [e for e in outbox.items("event", after) if any("ResizeObserver" in m for m in messages(e))]


def test_an_error_during_hydration_arrives_once(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    """The server's HTML differs from what the client renders: React reports a recoverable error
    through the root's onRecoverableError, which the loader records before the SDK has arrived."""
    after = outbox.mark()

    def rewrite(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace(">Try it<", ">Not what the client renders<", 1))

    page.route(app_server.url + "/try", rewrite)
    open_page(page, app_server, "/try")
    # React's production build names the error by number: #418 (text), #425, #423 (hydration failed).
    def hydration(e: dict[str, Any]) -> bool:
        return any(re.search(r"Hydration|error #4(18|19|23|25)\b", m) for m in messages(e))

    found = outbox.wait_for("event", hydration, after)
    assert len(found) == 1, [messages(e) for e in outbox.items("event", after)]
    [event] = found
    assert event["exception"]["values"][-1]["mechanism"]["type"] == "auto.function.react.error_handler"
    time.sleep(1.5)
    assert len(outbox.wait_for("event", hydration, after, 0)) == 1


def test_an_error_in_the_first_on_loads_call_script_arrives_once_with_its_stack(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    """`/try?fail=on_load`: the page's on_load handler answers with an `rx.call_script` that throws,
    among the page's first events, before the SDK has arrived (Reflex hands it to window.onerror)."""
    text = "Lookout try: an on_load script error"
    after = outbox.mark()
    open_page(page, app_server, "/try?fail=on_load")
    found = outbox.wait_for("event", lambda e: any(text in m for m in messages(e)), after)
    time.sleep(1.5)  # a second copy (the loader's beacon, a second replay) would be here by now
    found = outbox.wait_for("event", lambda e: any(text in m for m in messages(e)), after, 0)
    assert len(found) == 1, [messages(e) for e in found]
    [event] = found
    exception = event["exception"]["values"][-1]
    assert any("onLoadScript" in (f.get("function") or "") for f in exception["stacktrace"]["frames"]), exception
    assert exception["mechanism"]["type"] == "auto.browser.global_handlers.onerror"
    assert event["contexts"]["trace"]["trace_id"] == page.evaluate("() => window.lookout._trace.t")


def test_what_the_loader_sends_itself_stays_under_its_envelope_bound(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    """A page that logged 100 long console errors, then threw an error with a 50,000-character message,
    closed before the SDK arrived: its beacon keeps to loaderEnvelopeMaxBytes (the browser's 64 KB
    quota for beacons would refuse a larger one), cutting texts and dropping the oldest breadcrumbs."""
    html = page.context.request.get(app_server.url + "/try").text()
    bound = json.loads(re.search(r'id="lookout-monitoring-config"[^>]*>(.*?)</script>', html, re.S)[1])["loaderEnvelopeMaxBytes"]
    after = outbox.mark()
    block_sdk(page)
    throw_when_parsed(page, (
        "for (var i = 0; i < 100; i++) console.error('noisy line ' + i + ' ' + 'y'.repeat(5000));"
        f" function lookoutLongBoom() {{ throw new Error('{INLINE_ERROR} ' + 'z'.repeat(50000)); }} lookoutLongBoom();"
    ))
    page.goto(app_server.url + "/try", wait_until="commit")
    page.wait_for_function("() => window.lookout !== undefined && window.lookout.lastEventId() !== undefined")
    page.close(run_before_unload=True)
    [event] = inline_events(outbox, after)
    assert event["tags"]["lookout.sent_by"] == "loader"
    with contextlib.closing(sqlite3.connect(outbox.database, timeout=10)) as connection:
        [(size,)] = connection.execute("select length(body) from outbox where id > ? and instr(body, ?) > 0",
                                       (after, event["event_id"].encode())).fetchall()
    assert size <= bound
    exception = event["exception"]["values"][-1]
    assert exception["value"].startswith(INLINE_ERROR) and len(exception["value"]) <= 1025
    assert any(f.get("function") == "lookoutLongBoom" for f in exception["stacktrace"]["frames"])
    crumbs = event["breadcrumbs"]
    assert crumbs and all(len(c.get("message", "")) <= 1025 for c in crumbs)
    assert "noisy line 99 " in crumbs[-1]["message"]  # the newest kept, the oldest dropped
    assert len(crumbs) < 100


def test_when_the_sdk_cannot_be_fetched_the_loader_sends_errors_itself(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    text = "Lookout test: no SDK to be had"
    after = outbox.mark()
    block_sdk(page)
    page.add_init_script(MARK_INTERACTIVE)
    page.goto(app_server.url + "/try")
    page.wait_for_function("() => window.__lookoutInteractiveAt !== undefined")
    page.evaluate(f"() => setTimeout(() => {{ throw new Error('{text}'); }}, 0)")
    [event] = outbox.wait_for("event", lambda e: any(text in m for m in messages(e)), after)
    assert event["tags"]["lookout.sent_by"] == "loader"  # the page is still open: sent when the chunk failed
    assert page.evaluate("() => window.lookout.tracing") is False  # still the loader's
