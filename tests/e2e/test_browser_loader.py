"""The loader before hydration and the SDK after it (issue #16), in Chromium against the built app:
what happens before the SDK arrives reaches the tunnel once, the SDK is fetched only after
interactive on a page with no error, and the first page's backend work is in its page-load trace."""

from __future__ import annotations

import re
import time

from playwright.sync_api import Page, Route

from bench.page_cost import MARK_INTERACTIVE
from tests.e2e.app_server import AppServer
from tests.e2e.captured import Outbox, messages
from tests.e2e.test_browser_monitoring import open_page

SDK_CHUNK = "**/lookout_sdk-*.js"
INLINE_ERROR = "Lookout test: inline before modules"
# After the loader (in <head>), before the app's modules (the async module script ends <body>).
INLINE_SCRIPT = f"<script>function lookoutInlineBoom() {{ throw new Error('{INLINE_ERROR}'); }} lookoutInlineBoom();</script>"


def inject_inline_error(page: Page, app_server: AppServer, path: str, script: str = INLINE_SCRIPT) -> None:
    """Serve `path`'s HTML with a classic `script` (by default one that throws), right before `</head>`."""

    def rewrite(route: Route) -> None:
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace("</head>", script + "</head>", 1))

    page.route(app_server.url + path, rewrite)


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
    page.route(SDK_CHUNK, lambda route: None)  # held: the SDK never arrives
    inject_inline_error(page, app_server, "/try")
    page.goto(app_server.url + "/try", wait_until="commit")
    page.wait_for_function("() => window.lookout !== undefined")
    page.wait_for_timeout(50)
    assert page.evaluate("() => window.lookout._want") == 1  # recorded, the SDK asked for (and held)
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
    parents = {}
    for transaction in [pageload, *backend]:
        root = transaction["contexts"]["trace"]
        parents[root["span_id"]] = root.get("parent_span_id")
        parents.update({s["span_id"]: s.get("parent_span_id") for s in transaction.get("spans", [])})
    for transaction in backend:
        chain = [transaction["contexts"]["trace"]["span_id"]]
        while parents.get(chain[-1]) and len(chain) < 50:
            chain.append(parents[chain[-1]])
        assert chain[-1] == trace["span_id"], (transaction["transaction"], chain)
    assert [t for t in backend if t["transaction"].endswith("HomeState.load")]  # the page's on_load


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
    hydration = lambda e: any(re.search(r"Hydration|error #4(18|19|23|25)\b", m) for m in messages(e))  # noqa: E731
    found = outbox.wait_for("event", hydration, after)
    assert len(found) == 1, [messages(e) for e in outbox.items("event", after)]
    [event] = found
    assert event["exception"]["values"][-1]["mechanism"]["type"] == "auto.function.react.error_handler"
    time.sleep(1.5)
    assert len(outbox.wait_for("event", hydration, after, 0)) == 1
