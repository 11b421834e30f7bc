"""The dev overlay's backend and compile-time parts (issue 39): what a real sentry-sdk sends is kept by
trace, coalesced and bounded (dev_inbox.py); its routes answer this machine only (dev_routes.py); the
pages get it under `reflex run` only, and without a DSN the overlay is all they report to."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
import sentry_sdk

from plugin_support.envelopes import build
from plugin_support.helpers import CapturingTransport
from plugin_support.host_app import HostApp
from reflex_lookout import Monitoring, browser, dev_inbox, runtime
from reflex_lookout.dev_inbox import DevInbox
from reflex_lookout.dev_routes import DevRoutes
from reflex_lookout.dev_transport import DevTransport
from reflex_lookout.protocol import envelope
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.settings_error import SettingsError

DEV = {"REFLEX_ENV_MODE": "dev"}
PROD = {"REFLEX_ENV_MODE": "prod"}
DSN = "http://3f2a@127.0.0.1:3000/2"


def fail_in_a_handler() -> None:
    raise RuntimeError("the handler failed on purpose")


def sent_by_sentry_sdk() -> tuple[CapturingTransport, str]:
    """What the real server SDK sends for a handler that fails inside a transaction with a span and logs a line
    (the way event_tracing reports a Reflex event): the envelopes, and the trace's id."""
    capturing = CapturingTransport()
    client = sentry_sdk.Client(transport=capturing, traces_sample_rate=1.0, enable_logs=True,
                               default_integrations=False, release="r1")
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client)
        scope.set_tag("reflex.route", "/orders")
        with sentry_sdk.start_transaction(name="State.fail", op="reflex.event") as transaction:
            with sentry_sdk.start_span(op="db.sql.query", name="SELECT 1"):
                pass
            sentry_sdk.logger.info("a log line on purpose")
            try:
                fail_in_a_handler()
            except RuntimeError as exc:
                sentry_sdk.capture_exception(exc)
        trace_id = transaction.trace_id
    client.flush(timeout=2)
    return capturing, trace_id


def test_a_handlers_error_its_trace_and_its_log_line_are_kept_by_trace() -> None:
    capturing, trace_id = sent_by_sentry_sdk()
    inbox = DevInbox(routes=lambda: {"orders": {"file": "shop/orders.py", "line": 7}})
    for sent in capturing.envelopes:
        inbox.add_body(sent.serialize(), "server")
    answer = inbox.answer([trace_id], after=0)
    [issue] = answer["issues"]
    assert (issue["type"], issue["value"], issue["source"], issue["count"]) == (
        "RuntimeError", "the handler failed on purpose", "server", 1)
    raising = issue["frames"][-1]  # Sentry's order: the raising frame last
    assert raising["function"] == "fail_in_a_handler" and raising["in_app"] is True
    assert raising["context_line"].strip() == 'raise RuntimeError("the handler failed on purpose")'
    assert raising["abs_path"] == __file__ and raising["lineno"] == fail_in_a_handler.__code__.co_firstlineno + 1
    assert issue["python_page"] == {"file": "shop/orders.py", "line": 7}  # the event's route's page
    [transaction] = answer["traces"][trace_id]["transactions"]
    assert (transaction["name"], transaction["op"]) == ("State.fail", "reflex.event")
    assert [(s["op"], s["description"]) for s in transaction["spans"]] == [("db.sql.query", "SELECT 1")]
    assert [log["body"] for log in answer["traces"][trace_id]["logs"]] == ["a log line on purpose"]
    assert inbox.answer(["f" * 32], after=0)["issues"] == []  # another tab's traces: not this one's


def error(value: str, trace_id: str, frame: str = "throwIt") -> bytes:
    """A browser SDK's error event (the fields the overlay reads), in an envelope."""
    return build(DSN, [("event", json.dumps(error_event(value, trace_id, frame)).encode())])


def error_event(value: str, trace_id: str, frame: str = "throwIt") -> dict[str, Any]:
    return {"event_id": "a" * 32, "exception": {"values": [{"type": "Error", "value": value, "stacktrace": {
        "frames": [{"filename": "http://localhost:3000/app/routes/_index.jsx", "function": frame, "lineno": 3,
                    "colno": 9, "in_app": True}]}}]},
             "contexts": {"trace": {"trace_id": trace_id}}, "request": {"url": "http://localhost:3000/"},
             "breadcrumbs": [{"category": "ui.click", "message": "body > div > button#throw"}]}


def test_a_flood_is_one_issue_counted_and_distinct_errors_are_bounded() -> None:
    inbox, trace = DevInbox(), "1" * 32
    for _ in range(1000):
        inbox.add_body(error("the same error", trace), "browser")
    [issue] = inbox.answer([trace], 0)["issues"]
    assert issue["count"] == 1000 and issue["element"] == "button#throw"
    for n in range(dev_inbox.MAX_ISSUES + 50):
        inbox.add_body(error(f"error {n}", trace), "browser")
    issues = inbox.answer([trace], 0)["issues"]
    assert len(issues) == dev_inbox.MAX_ISSUES and issues[-1]["value"] == f"error {dev_inbox.MAX_ISSUES + 49}"


def test_the_answer_holds_only_what_changed_after_the_seq_asked_for() -> None:
    inbox, trace = DevInbox(), "2" * 32
    inbox.add_body(error("once", trace), "browser")
    seen = inbox.answer([trace], 0)["seq"]
    assert inbox.answer([trace], seen)["issues"] == [] and inbox.answer([trace], seen)["traces"] == {}
    later = {"type": "transaction", "transaction": "/", "start_timestamp": 1.0, "timestamp": 2.0,
             "contexts": {"trace": {"trace_id": trace, "op": "pageload", "span_id": "b" * 16}}, "spans": []}
    inbox.add_body(build(DSN, [("transaction", json.dumps(later).encode())]), "browser")
    answer = inbox.answer([trace], seen)
    assert answer["issues"] == [] and answer["traces"][trace]["transactions"][0]["op"] == "pageload"
    inbox.clear([answer["instance"], "not a key"])
    [issue] = inbox.answer([trace], 0)["issues"]
    inbox.clear([issue["key"]])
    assert inbox.answer([trace], 0)["issues"] == []


def test_a_malformed_item_is_skipped_and_the_rest_kept() -> None:
    inbox, trace = DevInbox(), "3" * 32
    body = build(DSN, [("event", b"{not json"), ("event", b'["a list"]'),
                       ("event", json.dumps(error_event("kept", trace)).encode())])
    assert inbox.add_body(body, "browser") == 1
    assert inbox.add_body(b"not an envelope", "browser") == 0
    assert [i["value"] for i in inbox.answer([trace], 0)["issues"]] == ["kept"]


def dev_settings(**options: Any) -> MonitoringSettings:
    return MonitoringSettings.resolve(options, DEV)


def routes_client(inbox: DevInbox, peer: str = "127.0.0.1") -> httpx.AsyncClient:
    settings = MonitoringSettings.resolve({}, {**DEV, "LOOKOUT_MAX_REQUEST_BYTES": "4096"})
    routes = DevRoutes(settings, inbox, Path("/srv/shop"))

    async def theirs(scope: dict, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 299, "headers": []})
        await send({"type": "http.response.body", "body": b"theirs"})

    transport = httpx.ASGITransport(app=routes.asgi(theirs), client=(peer, 50000))
    return httpx.AsyncClient(transport=transport, base_url="http://localhost:3000")


@pytest.mark.anyio
async def test_the_routes_keep_an_envelope_answer_the_tabs_traces_and_clear() -> None:
    inbox, trace = DevInbox(), "4" * 32
    async with routes_client(inbox) as client:
        posted = await client.post("/monitoring/dev/envelope", content=error("posted", trace),
                                   headers={"Content-Type": "application/x-sentry-envelope"})
        assert posted.status_code == 200
        answer = (await client.get("/monitoring/dev/events", params={"traces": f"{'9' * 32},{trace}", "after": "0"})).json()
        assert [i["value"] for i in answer["issues"]] == ["posted"]
        assert (answer["root"], answer["editor"]) == ("/srv/shop", "vscode://file{path}:{line}:{column}")
        cleared = await client.post("/monitoring/dev/clear", json={"keys": [answer["issues"][0]["key"]]})
        assert cleared.status_code == 200 and inbox.answer([trace], 0)["issues"] == []
        assert (await client.post("/monitoring/dev/clear", content=b"[")).status_code == 400
        assert (await client.get("/monitoring/dev/nothing")).status_code == 404
        assert (await client.get("/elsewhere")).status_code == 299  # the app's own routes
        assert (await client.post("/monitoring/dev/envelope", content=b"x" * 2048)).status_code == 400  # not an envelope
        too_big = await client.post("/monitoring/dev/envelope", content=b"x" * 5000)
        assert too_big.status_code == 413 and "limit is 4096 bytes" in too_big.json()["detail"]


@pytest.mark.anyio
async def test_the_routes_answer_this_machine_only_and_no_other_sites_page() -> None:
    inbox, trace = DevInbox(), "5" * 32
    async with routes_client(inbox, peer="203.0.113.9") as elsewhere:
        refused = await elsewhere.post("/monitoring/dev/envelope", content=error("from afar", trace))
        assert refused.status_code == 401 and refused.json() == {"detail": "The dev overlay answers this machine only."}
        assert (await elsewhere.get("/monitoring/dev/events", params={"traces": trace})).status_code == 401
    async with routes_client(inbox) as here:
        other_site = await here.get("/monitoring/dev/events", headers={"Origin": "http://evil.example"})
        assert other_site.status_code == 403
    assert inbox.answer([trace], 0)["issues"] == []


# How @sentry/core 11.12 reads a DSN (utils/dsn.js `DSN_REGEX`; a project id must be digits, and not 0).
SENTRY_JS_DSN = re.compile(r"^(?:(\w+):)\/\/(?:(\w+)(?::(\w+)?)?@)((?:\[[:.%\w]+\]|[\w.-]+))(?::(\d+))?\/(.+)")


def test_the_pages_get_the_overlay_under_reflex_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    match = SENTRY_JS_DSN.match(str(browser.DEV_ONLY_DSN))
    assert match is not None and match.group(6).isdigit() and match.group(6) != "0"  # the browser SDK starts with it
    dev = browser.browser_config(dev_settings(), None)
    assert dev["dsn"] == str(browser.DEV_ONLY_DSN) and dev["tunnel"] == "/monitoring/dev/envelope"
    assert dev["dev"] == {"intake": "/monitoring/dev/envelope", "events": "/monitoring/dev/events",
                          "clear": "/monitoring/dev/clear", "copy": False}
    with_dsn = browser.browser_config(dev_settings(dsn=DSN), MonitoringSettings.resolve({"dsn": DSN}, {}).dsn)
    assert with_dsn["tunnel"] == "/monitoring" and with_dsn["dev"]["copy"] is True
    prod = MonitoringSettings.resolve({"dsn": DSN}, PROD)
    assert "dev" not in browser.browser_config(prod, prod.dsn) and "/dev/" not in browser.loader_module(prod, prod.dsn)
    assert not MonitoringSettings.resolve({"dev_overlay": False}, DEV).shows_dev_overlay
    assert not MonitoringSettings.resolve({}, {}).shows_dev_overlay  # no mode said: not dev


@pytest.fixture
def no_runtime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SENTRY_DSN", raising=False)
    monkeypatch.setattr(runtime, "_current", None)
    monkeypatch.chdir(tmp_path)


@pytest.mark.usefixtures("no_runtime")
def test_without_a_dsn_under_reflex_run_the_backend_gets_the_overlay_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    app = HostApp()
    Monitoring().post_compile(app=app)  # type: ignore[arg-type]  # the attributes post_compile reads
    assert len(app.api_transformer) == 1 and [t.__name__ for t in app.lifespan_tasks] == ["run_dev_server_sdk"]
    assert app.backend_exception_handler.__name__ == "backend_exception_handler"
    assert runtime.current() is None and not (Path.cwd() / ".lookout").exists()  # no outbox: nothing is sent
    monkeypatch.setenv("REFLEX_ENV_MODE", "prod")
    prod = HostApp()
    Monitoring().post_compile(app=prod)  # type: ignore[arg-type]
    assert prod.api_transformer is None and prod.lifespan_tasks == []
    with_dsn = HostApp()
    Monitoring(dsn=DSN).post_compile(app=with_dsn)  # type: ignore[arg-type]
    assert len(with_dsn.api_transformer) == 1 and runtime.current() is not None and runtime.current().dev is None


@pytest.mark.usefixtures("no_runtime")
def test_with_a_dsn_under_reflex_run_the_runtime_copies_to_the_overlay(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    app = HostApp()
    Monitoring(dsn=DSN).post_compile(app=app)  # type: ignore[arg-type]
    built = runtime.current()
    assert built is not None and isinstance(built.dev, DevInbox) and len(app.api_transformer) == 2


def test_the_dev_transport_keeps_a_copy_and_hands_the_envelope_on() -> None:
    inbox, inner = DevInbox(), CapturingTransport()
    options = {"transport_queue_size": 8, "dsn": None}
    client = sentry_sdk.Client(transport=DevTransport(options, inbox, inner), default_integrations=False)
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client)
        try:
            fail_in_a_handler()
        except RuntimeError as exc:
            event_id = sentry_sdk.capture_exception(exc)
            trace_id = scope.get_active_propagation_context().trace_id
    client.flush(timeout=2)
    assert event_id is not None and [e.headers["event_id"] for e in inner.envelopes] == [event_id]
    [issue] = inbox.answer([trace_id], 0)["issues"]
    assert issue["event_id"] == event_id and issue["source"] == "server"


def test_the_editor_link_and_spotlight_settings() -> None:
    assert MonitoringSettings.resolve({}, {"REFLEX_LOOKOUT_EDITOR": "cursor"}).editor == "cursor://file{path}:{line}:{column}"
    template = "idea://open?file={path}&line={line}"
    assert MonitoringSettings.resolve({"editor": template}, {}).editor == template
    for bad in ("javascript:alert(1)//{path}", "https://x.example/{path}", "vscode://file"):
        with pytest.raises(SettingsError, match="must be an editor's URL scheme"):
            MonitoringSettings.resolve({"editor": bad}, {})
    assert MonitoringSettings.resolve({}, {"SENTRY_SPOTLIGHT": "1"}).spotlight == "http://localhost:8969/stream"
    assert MonitoringSettings.resolve({"spotlight": "http://127.0.0.1:9000/stream"}, {}).spotlight == "http://127.0.0.1:9000/stream"
    assert MonitoringSettings.resolve({}, {"SENTRY_SPOTLIGHT": "off"}).spotlight == ""
    with pytest.raises(SettingsError, match="must be on, off or the sidecar's URL"):
        MonitoringSettings.resolve({}, {"SENTRY_SPOTLIGHT": "maybe"})


@pytest.mark.anyio
async def test_with_spotlight_each_envelope_goes_on_plain_from_the_route_and_the_transport() -> None:
    """SENTRY_SPOTLIGHT: the browser's envelopes (decoded: Spotlight reads plain ones) and the server SDK's are
    passed to the relay (spotlight.py; tests/e2e/test_spotlight.py shows the real sidecar receiving them)."""
    import gzip

    relayed: list[bytes] = []
    inbox, trace = DevInbox(), "6" * 32
    routes = DevRoutes(dev_settings(), inbox, Path("/srv/shop"), relayed.append)
    body = error("to spotlight", trace)
    transport = httpx.ASGITransport(app=routes.asgi(lambda *_: None), client=("127.0.0.1", 50000))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:3000") as client:
        posted = await client.post("/monitoring/dev/envelope", content=gzip.compress(body),
                                   headers={"Content-Encoding": "gzip"})
    assert posted.status_code == 200 and [envelope.parse(r, 1 << 20) for r in relayed] == [envelope.parse(body, 1 << 20)]
    kept = DevInbox()
    client_ = sentry_sdk.Client(transport=DevTransport({"transport_queue_size": 8, "dsn": None}, kept, relay=relayed.append),
                                default_integrations=False)
    with sentry_sdk.isolation_scope() as scope:
        scope.set_client(client_)
        event_id = sentry_sdk.capture_message("server to spotlight")
    client_.flush(timeout=2)
    assert len(relayed) == 2 and event_id is not None and event_id.encode() in relayed[1]
