"""Reflex's OpenTelemetry event spans as Sentry transactions, and a failed handler's report.

The spans are made as Reflex's `otel.event_span` makes them (its attribute keys, a remote parent
from the browser's `traceparent`); the SQL runs on a real SQLite file and the HTTP request goes
to a real server on loopback, through sentry-sdk's own integrations.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
import sentry_sdk
import sqlalchemy
from opentelemetry import context as context_api, trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from reflex.event import EventHandler
from reflex.state import OnLoadInternalState, State, UpdateVarsInternalState
from reflex.utils.format import format_event_handler
from reflex_base import otel
from reflex_base.event.processor.base_state_processor import process_event

from app.pages.issues_state import IssuesState
from app.pages.try_errors import TryState
from app.settings import Settings
from plugin_support.helpers import CapturingTransport
from plugin_support.upstream import Upstream
from reflex_lookout import event_errors, event_tracing, server
from tests.console.clients import LOOPBACK, STRANGER, client_state, console_database, run
from tests.environment import LOCAL_ENV

BROWSER_TRACE, BROWSER_SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
ATTRIBUTES = {
    otel.ATTR_EVENT_NAME: "state.try_state.slow_work",
    otel.ATTR_CODE_FUNCTION_NAME: "app.pages.try_errors.TryState.slow_work",
    otel.ATTR_SESSION_ID: "0123456789abcdef",
}


@pytest.fixture
def traced(sentry_init) -> tuple[CapturingTransport, trace.Tracer, event_tracing.EventTransactions]:
    transport = CapturingTransport()
    sentry_init(transport=transport, **server.server_options(Settings.from_env(LOCAL_ENV)))
    processor = event_tracing.EventTransactions()
    return transport, event_tracing.tracer_provider(processor).get_tracer("reflex"), processor


def from_browser() -> context_api.Context:
    return TraceContextTextMapPropagator().extract({"traceparent": f"00-{BROWSER_TRACE}-{BROWSER_SPAN}-01"})


def test_an_event_is_a_transaction_in_the_browsers_trace_with_sql_and_http_spans(
    traced, engine: sqlalchemy.Engine, upstream: Upstream
) -> None:
    transport, tracer, _ = traced
    with tracer.start_as_current_span(ATTRIBUTES[otel.ATTR_EVENT_NAME], context=from_browser(), attributes=ATTRIBUTES):
        with engine.connect() as connection:
            connection.execute(sqlalchemy.text("select count(*) from outbox")).scalar_one()
        httpx.get(f"http://127.0.0.1:{upstream.port}/ping")
    sentry_sdk.flush()
    [transaction] = transport.items("transaction")
    trace_context = transaction["contexts"]["trace"]
    assert transaction["transaction"] == "TryState.slow_work"  # the handler, as a person reads it
    assert transaction["tags"]["reflex.event"] == "TryState.slow_work"  # readable, not Reflex's mangled path
    assert (trace_context["trace_id"], trace_context["parent_span_id"]) == (BROWSER_TRACE, BROWSER_SPAN)
    assert (trace_context["op"], trace_context["status"]) == ("reflex.event", "ok")
    ops = {(span["op"], span["description"]) for span in transaction["spans"]}
    assert ("db", "select count(*) from outbox") in ops
    assert any(op == "http.client" and description.endswith("/ping") for op, description in ops), ops
    assert all(span["trace_id"] == BROWSER_TRACE for span in transaction["spans"])
    assert transaction["contexts"]["reflex"]["handler"] == "app.pages.try_errors.TryState.slow_work"
    assert transaction["user"] == {"id": "0123456789abcdef"}


def reflex_event(transport: CapturingTransport, tracer: trace.Tracer, handler: EventHandler) -> dict[str, Any]:
    """The transaction of `handler`'s event, its span named and attributed as Reflex's `otel.event_span` does."""
    name = format_event_handler(handler)
    function = otel._code_function_name(handler.fn, "")
    attributes = {**ATTRIBUTES, otel.ATTR_EVENT_NAME: name, otel.ATTR_CODE_FUNCTION_NAME: function}
    with tracer.start_as_current_span(name, context=from_browser(), attributes=attributes):
        pass
    sentry_sdk.flush()
    [transaction] = transport.items("transaction")
    assert transaction["contexts"]["trace"]["trace_id"] == BROWSER_TRACE
    assert transaction["contexts"]["reflex"]["handler"] == attributes[otel.ATTR_CODE_FUNCTION_NAME]
    return transaction


@pytest.mark.parametrize(("handler", "name"), [pytest.param(handler, name, id=name) for handler, name in [
    (State.event_handlers["hydrate_and_load"], "State.hydrate_and_load"),
    (OnLoadInternalState.event_handlers["on_load_internal"], "OnLoadInternalState.on_load_internal"),
    (OnLoadInternalState.event_handlers["set_is_hydrated"], "OnLoadInternalState.set_is_hydrated"),
    (UpdateVarsInternalState.event_handlers["update_vars_internal"], "UpdateVarsInternalState.update_vars_internal"),
]])
def test_reflexs_own_events_are_its_plumbing_named_by_class_and_function(traced, handler, name) -> None:
    """Issue 36, item 9: what Reflex handles for every page is no work of the app's: op reflex.internal,
    so that /traces folds it under the page load (app/presentation/traces.py), named as a person reads
    it, not by module path ("reflex.state.State.hydrate_and_load")."""
    transport, tracer, _ = traced
    transaction = reflex_event(transport, tracer, handler)
    assert (transaction["transaction"], transaction["contexts"]["trace"]["op"]) == (name, "reflex.internal")


def test_a_handler_the_app_inherits_from_reflex_is_named_after_the_apps_state(traced) -> None:
    """`setvar` is Reflex's function (reflex.state.EventHandlerSetVar.setvar) but sets the app's state."""
    transport, tracer, _ = traced
    transaction = reflex_event(transport, tracer, TryState.event_handlers["setvar"])
    assert (transaction["transaction"], transaction["contexts"]["trace"]["op"]) == ("TryState.setvar", "reflex.event")
    assert transaction["tags"]["reflex.event"] == "TryState.setvar"


def test_a_failed_span_keeps_its_error_status_without_formatting_the_exception() -> None:
    # The exception handler reports the error; the span only needs its status.
    exporter = InMemorySpanExporter()
    tracer = event_tracing.tracer_provider(SimpleSpanProcessor(exporter)).get_tracer("reflex")
    with pytest.raises(ValueError), tracer.start_as_current_span("state.x.fail", attributes=ATTRIBUTES):
        raise ValueError("boom")
    [span] = exporter.get_finished_spans()
    assert span.status.status_code is trace.StatusCode.ERROR
    assert span.status.description == "ValueError: boom"
    assert span.events == ()


def test_spans_that_are_not_events_make_no_transaction(traced) -> None:
    transport, tracer, _ = traced
    with tracer.start_as_current_span("reflex.compile.pages"):
        pass
    sentry_sdk.flush()
    assert transport.items("transaction") == []


def test_a_failed_handler_is_reported_once_with_its_event_and_trace_and_a_toast(traced, monkeypatch) -> None:
    transport, tracer, processor = traced
    monkeypatch.setattr(event_errors, "processor", processor)
    with pytest.raises(RuntimeError) as raised:  # the span ends as the error leaves it
        with tracer.start_as_current_span(
            ATTRIBUTES[otel.ATTR_EVENT_NAME], context=from_browser(), attributes=ATTRIBUTES
        ) as span:
            raise RuntimeError("Lookout test: handler failed")
    # As Reflex does before calling the handler: the failed event's context is attached.
    token = context_api.attach(trace.set_span_in_context(span))
    try:
        toast = event_errors.backend_exception_handler(raised.value)
    finally:
        context_api.detach(token)
    sentry_sdk.flush()
    [event] = transport.items("event")
    [transaction] = transport.items("transaction")
    assert event["exception"]["values"][-1]["value"] == "Lookout test: handler failed"
    assert event["exception"]["values"][-1]["mechanism"] == {"type": "reflex", "handled": False}
    assert event["contexts"]["trace"]["trace_id"] == BROWSER_TRACE
    assert event["contexts"]["trace"]["span_id"] == transaction["contexts"]["trace"]["span_id"]
    assert event["contexts"]["reflex"]["event"] == "TryState.slow_work"
    assert event["contexts"]["reflex"]["reflex_name"] == "state.try_state.slow_work"
    assert event["tags"]["reflex.event"] == "TryState.slow_work"
    assert transaction["contexts"]["trace"]["status"] == "internal_error"
    assert "Something went wrong" in str(toast) and event["event_id"][:8] in str(toast)
    assert processor.failed_event(span.get_span_context().span_id) is None  # handed over once


def test_an_error_without_a_known_event_is_still_reported(traced, monkeypatch) -> None:
    transport, _, processor = traced
    monkeypatch.setattr(event_errors, "processor", processor)
    event_errors.backend_exception_handler(ValueError("Lookout test: no event"))
    sentry_sdk.flush()
    [event] = transport.items("event")
    assert event["exception"]["values"][-1]["value"] == "Lookout test: no event"
    assert "reflex" not in event.get("contexts", {})


def test_an_event_reflex_cannot_bind_makes_no_transaction(traced) -> None:
    """A client's event that never reached its handler (Reflex's own `process_event` raising while
    binding it) is no work of the app; a handler that raises is still one (the test above)."""
    transport, tracer, processor = traced
    with pytest.raises(TypeError):
        with tracer.start_as_current_span(ATTRIBUTES[otel.ATTR_EVENT_NAME], context=from_browser(),
                                          attributes=ATTRIBUTES) as span:
            asyncio.run(process_event(handler=State.event_handlers["set_is_hydrated"], payload={},
                                      state=State(_reflex_internal_init=True), root_state=None))
    sentry_sdk.flush()
    assert transport.items("transaction") == []
    assert processor.failed_event(span.get_span_context().span_id) is None  # nothing kept for a report


@pytest.mark.parametrize(("who", "transactions"), [(STRANGER, 0), (LOOPBACK, 1)], ids=["refused", "admitted"])
def test_an_event_the_console_refuses_makes_no_transaction(traced, tmp_path, monkeypatch, who, transactions) -> None:
    """A console event from a client the access rule refuses did no work of the app: a stranger's flood
    of them would fill the inbox with transactions. The same event from this machine is one."""
    transport, tracer, _ = traced
    next(console_database(tmp_path, monkeypatch))
    attributes = {**ATTRIBUTES, otel.ATTR_CODE_FUNCTION_NAME: "app.pages.issues_state.IssuesState.load"}
    state = client_state(IssuesState, who, "/issues")
    with tracer.start_as_current_span("issues_state.load", context=from_browser(), attributes=attributes):
        asyncio.run(run(IssuesState.event_handlers["load"], state, []))
    sentry_sdk.flush()
    assert len(transport.items("transaction")) == transactions
    assert bool(state.refused) == (who is STRANGER)
