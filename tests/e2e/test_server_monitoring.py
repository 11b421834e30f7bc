"""sentry-sdk in the built app's backend, driven from Chromium: errors, logs and traces of event
handlers reach the outbox (local mode), in one trace with the browser's."""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from reflex_lookout.event_errors import TOAST_TITLE
from tests.e2e.app_server import AppServer
from tests.e2e.captured import Outbox, messages
from tests.e2e.helpers import open_page


def _frames(event: dict) -> list[dict]:
    return [frame for value in event["exception"]["values"] for frame in value["stacktrace"]["frames"]]


def _server_transaction(outbox: Outbox, after: int, handler: str) -> dict:
    [found] = outbox.wait_for("transaction", lambda t: t["contexts"]["trace"].get("op") == "reflex.event"
                              and t["transaction"].endswith(handler), after)
    return found


def _browser_spans_in(outbox: Outbox, after: int, trace_id: str) -> list[dict]:
    """Browser transactions of `trace_id` (the event's own span is one, or a child of one)."""
    return outbox.wait_for("transaction", lambda t: t["contexts"]["trace"]["trace_id"] == trace_id
                           and t.get("platform") == "javascript", after)


def test_a_failing_handler_is_reported_once_in_the_browsers_trace_and_the_user_sees_a_toast(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.click("#try-backend-raise")
    expect(page.get_by_text(TOAST_TITLE)).to_be_visible(timeout=10_000)
    found = outbox.wait_for("event", lambda e: "Lookout try: a backend error" in messages(e), after)
    assert len(found) == 1
    [event] = found
    assert event["platform"] == "python" and event["sdk"]["name"] == "sentry.python"
    assert any(f["function"] == "raise_error" and f["filename"].endswith("try_errors.py") for f in _frames(event))
    assert event["exception"]["values"][-1]["mechanism"] == {"type": "reflex", "handled": False}
    reflex = event["contexts"]["reflex"]
    assert reflex["route"] == "/try" and reflex["handler"].endswith("TryState.raise_error")
    assert event["tags"]["reflex.event"] == reflex["event"] == "TryState.raise_error"  # not the mangled state path
    assert len(reflex["session"]) == 16  # a digest of the client token, never the token
    token = page.evaluate("() => window.sessionStorage.getItem('token')")
    assert token and all(token not in str(c) for c in outbox.envelopes(after))

    transaction = _server_transaction(outbox, after, "raise_error")
    assert transaction["contexts"]["trace"]["status"] == "internal_error"
    assert event["contexts"]["trace"]["trace_id"] == transaction["contexts"]["trace"]["trace_id"]
    browser = _browser_spans_in(outbox, after, transaction["contexts"]["trace"]["trace_id"])
    sent = {t["transaction"] for t in browser if t["contexts"]["trace"].get("op") == "ui.reflex.event"} | {
        s.get("description") for t in browser for s in t.get("spans", []) if s.get("op") == "ui.reflex.event"}
    assert "TryState.raise_error" in sent, sent  # the click's event span, named as the backend's tag names it

    time.sleep(1.5)  # a second copy (Reflex's own logging, the logging integration) would be here by now
    assert len(outbox.wait_for("event", lambda e: "Lookout try: a backend error" in messages(e), after, 0)) == 1


def test_a_handlers_log_line_becomes_a_log_item(app_server: AppServer, page: Page, outbox: Outbox) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.click("#try-backend-log")
    expect(page.locator("#try-confirmation")).to_contain_text("Backend log line: written")
    batches = outbox.wait_for("log", lambda batch: any(
        "Lookout try: a backend log line" in item.get("body", "") for item in batch.get("items", [])
    ), after)
    [item] = [i for b in batches for i in b["items"] if "Lookout try: a backend log line" in i["body"]]
    assert item["level"] == "info"
    assert item["attributes"]["sentry.sdk.name"]["value"] == "sentry.python"


def test_the_slow_handler_is_a_transaction_with_sql_and_http_spans_in_the_browsers_trace(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    open_page(page, app_server, "/try")
    after = outbox.mark()
    page.click("#try-backend-slow")
    expect(page.locator("#try-confirmation")).to_contain_text("Slow handler: done", timeout=10_000)
    transaction = _server_transaction(outbox, after, "slow_work")
    spans = transaction["spans"]
    assert any(s["op"] == "db" and "select count(*) from outbox" in s["description"] for s in spans), spans
    assert any(s["op"] == "http.client" and s["description"].endswith("/ping") for s in spans), spans
    trace = transaction["contexts"]["trace"]
    assert trace["status"] == "ok" and trace.get("parent_span_id")
    browser = _browser_spans_in(outbox, after, trace["trace_id"])
    ids = {t["contexts"]["trace"]["span_id"] for t in browser} | {s["span_id"] for t in browser for s in t["spans"]}
    assert trace["parent_span_id"] in ids  # the backend's transaction is the child of the browser's span
