"""Each Reflex event the backend handles is a Sentry transaction, in the browser's trace.

Reflex 0.10 has OpenTelemetry trace points (`reflex_base/otel.py`), inert until `otel.enable()`:
then every event handler runs inside an OpenTelemetry span named after the event, and the W3C
`traceparent` that the browser puts on an event (Reflex's `window.__reflex_otel.onEventSend` hook,
filled in by browser.js) becomes the span's remote parent. `EventTransactions`, an OpenTelemetry
span processor, turns each such span into a sentry-sdk transaction with the same trace id and
span id, made current in a scope of its own for the handler's code, so sentry-sdk's SQLAlchemy and
httpx integrations hang their spans under it: click → event handler → SQL → HTTP in one trace.

A transaction is named as a person reads the handler, its class and function (`TracesState.load`;
a handler the app's state inherits from Reflex, `setvar`, by that state: `TryState.setvar`; the
module path is the `reflex` context's `handler`). Reflex's own plumbing, the events of its own
states for every page (`State.hydrate_and_load`, `OnLoadInternalState.on_load_internal`,
`OnLoadInternalState.set_is_hydrated`, `UpdateVarsInternalState.update_vars_internal`, ...), gets the
op `reflex.internal` rather than `reflex.event`: in the trace of the page view they belong to, under
the page load, never read as the app's own work (the console's /traces folds them).

When a handler raises, its scope (tags, contexts, the finished transaction) is kept for the
backend exception handler (event_errors.py), which Reflex calls later from another task. An event
Reflex could not bind to its handler (`event_binding.client_fault`) is no work of the app: it makes
no transaction (a client sending thousands of them would fill the inbox with them), and nor does
an event the console's access rule refused (reflex_lookout/untraced.py `refused_event`).

Breadcrumbs are kept only inside an event's scope (`keep_breadcrumb`, sentry-sdk's `before_breadcrumb`):
the SQL and HTTP calls of the tunnel's requests and of the background tasks (forwarder, feeder,
leases, retention, alert sender) are nobody's, and an error of a user's click must not carry them.
An event handler marked as housekeeping (reflex_lookout/untraced.py: a live page's refresh loop)
gets a scope of its own but no transaction, and keeps no breadcrumbs either.

The spans record no exception event: the exception is reported to Sentry by the exception handler,
and OpenTelemetry's `record_exception` formats the whole traceback of every failed event (with a
`linecache` check of each frame's file) for a span nobody exports.
"""

from __future__ import annotations

import contextlib
import sys
from collections import OrderedDict
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import sentry_sdk
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.trace import StatusCode
from reflex_base import otel
from reflex_base.constants import RouteVar
from reflex_base.event.context import EventContext
from reflex_base.utils.format import to_snake_case
from sentry_sdk.scope import use_isolation_scope, use_scope
from sentry_sdk.tracing import NoOpSpan, Span as SentrySpan, Transaction, TransactionSource

from reflex_lookout.event_binding import client_fault
from reflex_lookout.untraced import is_housekeeping

OP = "reflex.event"
INTERNAL_OP = "reflex.internal"  # an event of Reflex's own package: its plumbing, not the app's work
REFLEX_PACKAGES = ("reflex", "reflex_base")  # whose handlers are Reflex's own
ORIGIN = "auto.function.reflex"
# Scopes of failed events kept for the exception handler; it runs right after, so a few suffice.
KEEP_FAILED = 256


@dataclass(frozen=True)
class EventInfo:
    """What an error report says about the event that raised it (nothing secret)."""

    event: str  # Reflex's event name: its state's mangled full name, e.g. "reflex___state____state.app___pages…raise_error"
    handler: str  # the handler function's qualified name, e.g. "app.pages.try_errors.TryState.raise_error"
    route: str  # the page's route, e.g. "/try"
    session: str  # Reflex's pseudonymous session id (a digest of the client token)

    @property
    def name(self) -> str:
        """The event as a person reads it: the handler's class and function, "TryState.raise_error"; for
        a handler of Reflex's that a state inherits (`setvar`), that state's ("TryState.setvar")."""
        handler_class, _, function = ".".join(self.handler.split(".")[-2:]).rpartition(".")
        _, state = self._state()
        if state and handler_class and to_snake_case(handler_class) != state:
            return "".join(word[:1].upper() + word[1:] for word in state.split("_")) + "." + function
        return f"{handler_class}.{function}" if handler_class else function

    @property
    def internal(self) -> bool:
        """Whether the event is Reflex's own plumbing ("reflex.state.State.hydrate_and_load"), not the
        app's work: the state it names is Reflex's (or, naming none, the handler is)."""
        module, state = self._state()
        if state:
            return module.split("___", 1)[0] in REFLEX_PACKAGES
        return self.handler.split(".", 1)[0] in REFLEX_PACKAGES

    def _state(self) -> tuple[str, str]:
        """The module and class of the state the event names, as Reflex writes them: "reflex___state____state.
        app___pages___try_errors____try_state.setvar" → ("app___pages___try_errors", "try_state")."""
        path = self.event.rsplit(".", 2)
        if len(path) < 2:
            return "", ""
        module, _, state = path[-2].rpartition("____")
        return module, state

    def context(self) -> dict[str, str]:
        return {"event": self.name, "handler": self.handler, "route": self.route, "session": self.session,
                "reflex_name": self.event}


@dataclass
class _Open:
    transaction: SentrySpan  # the Transaction started, or a NoOpSpan when tracing is off
    scopes: contextlib.ExitStack
    info: EventInfo


class EventTransactions(SpanProcessor):
    """Mirrors Reflex's event spans as Sentry transactions (other OpenTelemetry spans are ignored)."""

    def __init__(self) -> None:
        self._open: dict[int, _Open] = {}
        self._failed: OrderedDict[int, tuple[sentry_sdk.Scope, sentry_sdk.Scope, EventInfo]] = OrderedDict()

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        attributes = span.attributes or {}
        if otel.ATTR_EVENT_NAME not in attributes:
            return
        info = _event_info(span.name, attributes)
        context = span.get_span_context()
        parent = span.parent
        scopes = contextlib.ExitStack()
        isolation = scopes.enter_context(sentry_sdk.isolation_scope())
        housekeeping = is_housekeeping(info.handler)
        scopes.callback(_IN_EVENT.reset, _IN_EVENT.set(not housekeeping))
        if housekeeping:
            self._open[context.span_id] = _Open(NoOpSpan(), scopes, info)
            return
        isolation.set_tag("reflex.event", info.name)  # not Reflex's mangled state path
        isolation.set_tag("reflex.route", info.route)
        isolation.set_context("reflex", info.context())
        isolation.set_user({"id": info.session})  # pseudonymous: counts sessions, names nobody
        transaction = sentry_sdk.start_transaction(Transaction(
            name=info.name,  # "TryState.slow_work" (the module path is the reflex context's "handler")
            op=INTERNAL_OP if info.internal else OP,
            source=TransactionSource.COMPONENT,
            origin=ORIGIN,
            trace_id=format(context.trace_id, "032x"),
            span_id=format(context.span_id, "016x"),
            parent_span_id=format(parent.span_id, "016x") if parent is not None else None,
            parent_sampled=bool(parent.trace_flags.sampled) if parent is not None and parent.is_remote else None,
            same_process_as_parent=parent is None or not parent.is_remote,
        ))
        transaction.set_data("reflex.route", info.route)
        sentry_sdk.get_current_scope().span = transaction
        self._open[context.span_id] = _Open(transaction, scopes, info)

    def on_end(self, span: ReadableSpan) -> None:
        context = span.get_span_context()
        opened = self._open.pop(context.span_id, None) if context is not None else None
        if context is None or opened is None:
            return
        failed = span.status.status_code is StatusCode.ERROR
        opened.transaction.set_status("internal_error" if failed else "ok")
        # A failed span ends while its exception propagates (OpenTelemetry's `use_span` ends it in a
        # `finally`), so the exception is the one being handled here.
        if failed and client_fault(sys.exc_info()[1]):
            opened.transaction.sampled = False  # not sent
        elif failed:
            scopes = (sentry_sdk.get_isolation_scope(), sentry_sdk.get_current_scope(), opened.info)
            self._failed[context.span_id] = scopes
            while len(self._failed) > KEEP_FAILED:
                self._failed.popitem(last=False)
        try:
            opened.transaction.finish()
        finally:
            with contextlib.suppress(ValueError):  # ended in another context than it started in
                opened.scopes.close()

    def failed_event(self, span_id: int) -> tuple[sentry_sdk.Scope, sentry_sdk.Scope, EventInfo] | None:
        """The scopes and event of a handler that raised (once), for its error report."""
        return self._failed.pop(span_id, None)

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


# Set while a traced event's handler runs (and in the threads it hands work to with anyio.to_thread,
# which copy the context).
_IN_EVENT: ContextVar[bool] = ContextVar("lookout_in_traced_event", default=False)


def keep_breadcrumb(crumb: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any] | None:
    """sentry-sdk's `before_breadcrumb`: a breadcrumb is kept only inside a traced event."""
    return crumb if _IN_EVENT.get() else None


def _event_info(name: str, attributes: Any) -> EventInfo:
    try:
        route = str(EventContext.get().router_data.get(RouteVar.PATH) or "")
    except LookupError:
        route = ""
    return EventInfo(
        event=name,
        handler=str(attributes.get(otel.ATTR_CODE_FUNCTION_NAME, name)),
        route=route,
        session=str(attributes.get(otel.ATTR_SESSION_ID, "")),
    )


class _NoExceptionEvents(trace.Tracer):
    """A tracer whose spans keep their error status but record no exception event."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self._tracer = tracer

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._tracer.start_span(*args, **kwargs)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        return self._tracer.start_as_current_span(*args, **{**kwargs, "record_exception": False})


class _Provider(TracerProvider):
    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return _NoExceptionEvents(super().get_tracer(*args, **kwargs))


def tracer_provider(*processors: SpanProcessor) -> TracerProvider:
    """The provider Reflex's trace points get their tracer from, feeding `processors`."""
    provider = _Provider()
    for processor in processors:
        provider.add_span_processor(processor)
    return provider


def enable() -> EventTransactions:
    """Turn Reflex's trace points on, feeding `EventTransactions` (once per process)."""
    processor = EventTransactions()
    otel.enable(tracer_provider=tracer_provider(processor))
    return processor


@contextlib.contextmanager
def failed_event_scope(processor: EventTransactions | None) -> Iterator[EventInfo | None]:
    """Inside: the scopes of the event whose span is current (as Reflex's exception handling
    attaches it), if it failed; otherwise fresh scopes. Yields what is known of the event."""
    found = None
    if processor is not None:
        found = processor.failed_event(trace.get_current_span().get_span_context().span_id)
    if found is None:
        with sentry_sdk.isolation_scope():
            yield None
        return
    isolation, current, info = found
    with use_isolation_scope(isolation), use_scope(current):
        yield info
