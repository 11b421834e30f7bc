"""Stored events made into display rows: every sample reads; breadcrumbs, tags, contexts and traces
come out in order and bounded (the stack: test_present_stack.py)."""

from __future__ import annotations

import http.client
import http.server
import json
import logging
import threading

import pytest
import sentry_sdk
from sentry_sdk.integrations.logging import LoggingIntegration
from sentry_sdk.integrations.stdlib import StdlibIntegration

from app.presentation import event as present
from plugin_support.envelopes import SAMPLE_PATHS, SAMPLES
from reflex_lookout.protocol import envelope
from tests.factories import sentry_sdk_envelopes

EVENT = {
    "breadcrumbs": {"values": [{"timestamp": 0, "category": "http", "data": {"url": "/x"}}]},
    "tags": {"route": "/orders"}, "release": "shop@2", "contexts": {"os": {"name": "Linux"}},
}


def test_breadcrumbs_tags_and_contexts() -> None:
    assert present.breadcrumb_rows(EVENT) == [
        {"time": "00:00:00", "type": "default", "category": "http", "level": "info", "message": "/x"}]
    assert present.tag_rows(EVENT) == [("release", "shop@2"), ("route", "/orders")]


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_can_be_shown(path) -> None:
    event = json.loads(path.read_text())
    rows = present.breadcrumb_rows(event)
    assert all(list(row) == ROW_KEYS and all(isinstance(v, str) for v in row.values()) for row in rows)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in present.tag_rows(event))


ROW_KEYS = ["time", "type", "category", "level", "message"]


def crumbs(*values: object) -> list[dict[str, str]]:
    return present.breadcrumb_rows({"breadcrumbs": {"values": list(values)}})


def summaries(*values: object) -> list[str]:
    return [row["message"] for row in crumbs(*values)]


def test_the_samples_breadcrumbs_read_as_sentry_shows_them() -> None:
    """sentry-python's (Django queries, log records), a Python SDK's typed ones, sentry-java's."""
    def sample(name: str) -> list[dict[str, str]]:
        return present.breadcrumb_rows(json.loads((SAMPLES / "bugsink" / name).read_text()))

    assert sample("visualshots-rich.json") == [
        {"time": "09:14:57", "type": "navigation", "category": "ui", "level": "info",
         "message": "Opened checkout confirmation page"},  # no from/to: the message
        {"time": "09:14:58", "type": "http", "category": "payment", "level": "info",
         "message": "POST /authorize returned 504"},  # no method/url/status: the message
        {"time": "09:15:00", "type": "error", "category": "checkout", "level": "info",
         "message": "Payment authorization failed"},
    ]
    django = sample("user-id-as-int.json")
    assert django[0] == {"time": "11:18:58", "type": "default", "category": "query", "level": "info", "message": "connect"}
    assert {"time": "11:18:58", "type": "log", "category": "bugsink.performance.ingest", "level": "info",
            "message": "ingested event with 40746 bytes"} in django
    assert sample("top-level-message-no-exception.json") == [{  # `data: {}`: nothing to add
        "time": "14:34:25", "type": "default",
        "category": "com.example.social.core.external.tiktok.business.TiktokBusinessApiImpl",
        "level": "error", "message": "Failed to send request to Tiktok API"}]


def test_the_real_python_sdks_request_and_log_breadcrumbs() -> None:
    """sentry-python 2 names a request's method and status `http.method`, `http.response.status_code`."""
    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self.send_response(200 if self.path.startswith("/api/") else 404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        integrations = [StdlibIntegration(), LoggingIntegration(level=logging.INFO, event_level=None)]
        with sentry_sdk_envelopes(integrations=integrations) as bodies:
            connection = http.client.HTTPConnection("127.0.0.1", server.server_port)
            for path in ("/api/cart?coupon=1", "/gone"):
                connection.request("GET", path)
                connection.getresponse().read()
            logging.getLogger("tests.shop").warning("cart %s is empty", 7)
            sentry_sdk.capture_message("checkout failed")
    finally:
        server.shutdown()
    event = next(json.loads(item.payload) for body in bodies for item in envelope.parse(body, 1 << 20).items
                 if item.type == "event")
    base = f"http://127.0.0.1:{server.server_port}"
    rows = present.breadcrumb_rows(event)
    assert [(r["type"], r["category"], r["level"], r["message"]) for r in rows] == [
        ("http", "httplib", "info", f"GET {base}/api/cart [200]"),
        ("http", "httplib", "warning", f"GET {base}/gone [404]"),
        ("log", "tests.shop", "warning", "cart 7 is empty"),
    ]


def test_requests_read_method_url_status() -> None:
    """The browser SDK's fetch and xhr breadcrumbs, and any `type: "http"` one."""
    fetch = {"type": "http", "category": "fetch", "timestamp": 1700000000.25,
             "data": {"method": "GET", "url": "/api/cart", "status_code": 200}}
    xhr = {"type": "http", "category": "xhr", "level": "error",
           "data": {"method": "POST", "url": "https://shop.example/pay", "status_code": 502, "__sentry_xhr_v3__": {}}}
    assert crumbs(fetch, xhr) == [
        {"time": "22:13:20", "type": "http", "category": "fetch", "level": "info", "message": "GET /api/cart [200]"},
        {"time": "", "type": "http", "category": "xhr", "level": "error", "message": "POST https://shop.example/pay [502]"},
    ]
    assert summaries(
        {"category": "fetch", "data": {"url": "/no-method", "status_code": 204}},  # no type: the category says it
        {"category": "http", "data": {"method": "GET", "url": "/pending"}},  # no answer yet
        {"type": "http", "data": {"method": "DELETE", "status_code": 0}},  # no url; 0 is a status (a network error)
        {"type": "http", "category": "httplib", "data": {"url": 42, "method": ["GET"], "status_code": True}},
        {"type": "http", "data": {"url": 1.5, "status_code": 404.0}},
        {"type": "http", "data": {"url": None}, "message": "what the SDK said"},  # nothing usable: the message
        {"type": "http", "data": "GET /x", "message": "m"},  # data that is no object
        {"type": "http", "data": {"url": None, "reason": "OK"}},  # nothing usable, no message: the pairs
    ) == ["/no-method [204]", "GET /pending", "DELETE [0]", "42", "1.5 [404.0]", "what the SDK said", "m",
          "reason=OK url=null"]


def test_navigations_read_from_and_to() -> None:
    assert summaries(
        {"category": "navigation", "data": {"from": "/cart", "to": "/checkout?step=2"}},
        {"category": "navigation", "data": {"to": "/"}},  # the first page: no from
        {"category": "navigation", "data": {"from": "/cart"}},
        {"category": "navigation", "data": {"from": {"path": "/"}, "to": 7}},
        {"category": "navigation", "message": "opened", "data": {}},
        {"category": "navigation", "data": ["/a", "/b"]},
    ) == ["/cart → /checkout?step=2", "→ /", "/cart →", "→ 7", "opened", '["/a","/b"]']
    assert crumbs({"category": "navigation", "data": {"from": "/a", "to": "/b"}})[0]["type"] == "default"


def test_console_calls_read_their_text_and_level() -> None:
    """The browser SDK sets `message` (the arguments joined) and the level; older SDKs only the data."""
    browser = {"category": "console", "level": "warning", "message": "cart empty 0",
               "data": {"arguments": ["cart empty", 0], "logger": "console"}}
    older = {"category": "console", "data": {"arguments": ["total", 3, {"items": [1, 2]}, None, True], "level": "warn",
                                             "logger": "console"}}
    assert [(r["level"], r["message"]) for r in crumbs(browser, older)] == [
        ("warning", "cart empty 0"), ("warning", 'total 3 {"items":[1,2]} null true')]
    assert [(r["level"], r["message"]) for r in crumbs(
        {"category": "console", "level": "log", "data": {"arguments": []}},  # `log` is one of Sentry's levels
        {"category": "console", "data": {"arguments": "one string", "level": "assert"}},
        {"category": "console", "data": {"arguments": {"not": "a list"}}},
        {"category": "console", "data": "not an object"},
        {"category": "console"},
    )] == [("log", ""), ("error", "one string"), ("info", '{"not":"a list"}'), ("info", "not an object"),
           ("info", "")]


def test_other_breadcrumbs_read_their_message_else_their_data_as_pairs() -> None:
    assert summaries(
        {"category": "ui.click", "message": "body > div#app > button.buy", "data": {"ignored": 1}},
        {"category": "auth", "data": {"user": "ada", "attempt": 2, "note": "two words", "empty": "", "deep": {"b": [1]},
                                      "none": None, "ok": False}},
        {"category": "auth", "message": 404},
        {"data": [1, "two"]},
        {"data": 3.5},
        {"data": {}},
        {},
    ) == ["body > div#app > button.buy",
          'attempt=2 deep={"b":[1]} empty="" none=null note="two words" ok=false user=ada',
          "404", '[1,"two"]', "3.5", "", ""]
    assert crumbs({})[0] == {"time": "", "type": "default", "category": "default", "level": "info", "message": ""}
    assert crumbs({"type": "query"})[0]["category"] == "query"  # no category: the type names it
    assert crumbs("not a breadcrumb", None, 3) == []
    assert present.breadcrumb_rows({"breadcrumbs": "junk"}) == present.breadcrumb_rows({}) == []
    assert summaries({"message": "<img src=x onerror=alert(1)>"}) == ["<img src=x onerror=alert(1)>"]  # text, as sent


def test_every_summary_is_bounded() -> None:
    long = "x" * 100_000
    cut = present.MAX_TEXT + 1  # display()'s: the text and "…"
    wide = {f"k{n:06}": n for n in range(100_000)}
    shown = summaries(
        {"type": "http", "data": {"method": "GET", "url": long, "status_code": 200}},
        {"category": "navigation", "data": {"from": long, "to": long}},
        {"category": "console", "data": {"arguments": [long] * 1000}},
        {"category": "console", "data": {"arguments": list(range(100_000))}},
        {"data": wide},
        {"data": {"k": long}},
        {"message": long},
    )
    assert all(len(message) == cut and message.endswith("…") for message in shown)
    assert shown[4].startswith("k000000=0 k000001=1 ")


def test_a_trace_is_one_tree_on_one_timeline() -> None:
    browser = {"transaction": "/try", "start_timestamp": 10.0, "timestamp": 11.0,
               "contexts": {"trace": {"span_id": "a" * 16, "op": "pageload"}},
               "spans": [{"span_id": "b" * 16, "parent_span_id": "a" * 16, "op": "ui.reflex.event",
                          "description": "slow_work", "start_timestamp": 10.2, "timestamp": 10.2}]}
    backend = {"transaction": "TryState.slow_work", "start_timestamp": 10.25, "timestamp": 10.75,
               "contexts": {"trace": {"span_id": "c" * 16, "parent_span_id": "b" * 16, "op": "reflex.event"}},
               "spans": [{"span_id": "d" * 16, "parent_span_id": "c" * 16, "op": "db",
                          "description": "select 1", "start_timestamp": 10.3, "timestamp": 10.4}]}
    rows = present.waterfall_rows([backend, browser])  # any order in, the tree out
    assert [(r["label"], r["indent"]) for r in rows] == [
        ("/try", "0em"), ("slow_work", "1.25em"), ("TryState.slow_work", "2.5em"), ("select 1", "3.75em"),
    ]
    assert (rows[0]["left"], rows[0]["width"], rows[0]["duration"]) == ("0.00%", "100.00%", "1000.0 ms")
    assert (rows[2]["left"], rows[2]["width"]) == ("25.00%", "50.00%")
    assert rows[1]["width"] == "0.30%"  # an instant is still visible
    assert present.waterfall_rows([]) == []


def test_iso_timestamps_as_sentry_python_sends_them_are_placed_too() -> None:
    backend = {"transaction": "handler", "start_timestamp": "2026-11-22T10:00:00.000000Z",
               "timestamp": "2026-11-22T10:00:00.500000Z", "contexts": {"trace": {"span_id": "c" * 16}},
               "spans": [{"span_id": "d" * 16, "parent_span_id": "c" * 16, "description": "select 1",
                          "start_timestamp": "2026-11-22T10:00:00.100000Z", "timestamp": "2026-11-22T10:00:00.200000Z"}]}
    rows = present.waterfall_rows([backend])
    assert [(r["label"], r["duration"], r["left"]) for r in rows] == [
        ("handler", "500.0 ms", "0.00%"), ("select 1", "100.0 ms", "20.00%")]


def test_a_trace_of_100000_nested_spans_is_walked_and_its_first_rows_shown() -> None:
    depth = 100_000
    spans = [{"span_id": f"s{n}", "parent_span_id": f"s{n - 1}" if n else "root", "op": "db", "description": f"q{n}",
              "start_timestamp": 10.0 + n / depth, "timestamp": 11.0} for n in range(depth)]
    transaction = {"transaction": "/deep", "start_timestamp": 10.0, "timestamp": 11.0,
                   "contexts": {"trace": {"span_id": "root"}}, "spans": spans}
    rows = present.waterfall_rows([transaction])
    shown = present.MAX_SPAN_ROWS
    assert len(rows) == shown + 1 and [r["label"] for r in rows[:3]] == ["/deep", "q0", "q1"]
    assert rows[shown - 1]["label"] == f"q{shown - 2}"
    assert rows[shown - 1]["indent"] == f"{present.MAX_INDENT_DEPTH * 1.25:g}em"
    assert rows[-1]["label"] == f"{depth + 1 - shown:,} more spans not shown"


def test_an_event_shows_a_bounded_number_of_rows_of_each_kind() -> None:
    """A 1 MiB item can hold 100,000 breadcrumbs: the page gets a bounded number."""
    crumbs = [{"message": f"c{n}", "timestamp": 1.0} for n in range(100_000)]
    event = {"breadcrumbs": {"values": crumbs},
             "tags": {f"t{n}": "v" for n in range(10_000)}, "contexts": {f"c{n}": {} for n in range(10_000)}}
    breadcrumbs = present.breadcrumb_rows(event)
    assert len(breadcrumbs) == present.MAX_BREADCRUMBS + 1
    assert breadcrumbs[0]["message"] == f"{100_000 - present.MAX_BREADCRUMBS:,} older breadcrumbs not shown"
    assert breadcrumbs[-1]["message"] == "c99999"  # the newest kept
    assert len(present.tag_rows(event)) <= present.MAX_PAIRS
    one_more = present.breadcrumb_rows({"breadcrumbs": crumbs[:present.MAX_BREADCRUMBS + 1]})
    assert one_more[0] == {"time": "", "type": "default", "category": "lookout", "level": "info",
                           "message": "1 older breadcrumb not shown"}


def test_spans_whose_parents_form_a_loop_are_still_shown_once() -> None:
    spans = [{"span_id": "a", "parent_span_id": "b", "start_timestamp": 1.0, "timestamp": 2.0, "description": "a"},
             {"span_id": "b", "parent_span_id": "a", "start_timestamp": 1.5, "timestamp": 2.0, "description": "b"},
             {"span_id": "c", "parent_span_id": "c", "start_timestamp": 1.7, "timestamp": 2.0, "description": "c"}]
    rows = present.waterfall_rows([{"contexts": [], "spans": spans}])
    assert [(r["label"], r["indent"]) for r in rows] == [("a", "0em"), ("b", "1.25em"), ("c", "0em")]


def test_sparkline() -> None:
    assert present.sparkline([0, 1, 2, 4]) == " ▂▄█"
    assert present.sparkline([0, 0]) == "  " and present.sparkline([]) == ""


def test_a_span_or_transaction_that_failed_is_marked_in_the_waterfall() -> None:
    transaction = {"transaction": "POST /api/checkout", "start_timestamp": 1.0, "timestamp": 2.0,
                   "contexts": {"trace": {"trace_id": "a" * 32, "span_id": "1" * 16, "status": "internal_error"}},
                   "spans": [{"span_id": "2" * 16, "parent_span_id": "1" * 16, "start_timestamp": 1.1, "timestamp": 1.2,
                              "description": "select 1", "status": "ok"},
                             {"span_id": "3" * 16, "parent_span_id": "1" * 16, "start_timestamp": 1.3, "timestamp": 1.4,
                              "description": "GET /pay", "status": "deadline_exceeded"},
                             {"span_id": "4" * 16, "parent_span_id": "1" * 16, "start_timestamp": 1.5, "timestamp": 1.6,
                              "description": "no status"}]}
    assert [(r["label"], r["failed"]) for r in present.waterfall_rows([transaction])] == [
        ("POST /api/checkout", "yes"), ("select 1", ""), ("GET /pay", "yes"), ("no status", "")]
