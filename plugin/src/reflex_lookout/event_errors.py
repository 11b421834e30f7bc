"""What happens when a Reflex event handler raises: one error report, and a toast for the user.

An event the handler could not even be called with is the client's doing, not the app's: Reflex
raises while binding it (an argument missing or unknown, a `setvar` of no such var), before any of
the app's code ran. A page from before a deploy sends those, and so does any websocket client that
makes its own events: reporting each as an error of the app would let anyone fill the inbox. Those
get a toast asking for a reload and one warning line per handler and kind in the terminal.

Reflex calls `App.backend_exception_handler` with the exception after the handler's task ended,
with the failed event's OpenTelemetry context attached; `event_tracing` kept that event's Sentry
scopes, so the report carries the event, its route and session, and the event's transaction (one
trace with the browser's click). The traceback is still logged for the terminal, by a logger that
sentry-sdk's logging integration leaves out of error events (no second copy of the same error).
"""

from __future__ import annotations

import functools
import logging

import reflex as rx
import sentry_sdk
from reflex_base.event import EventSpec
from sentry_sdk.integrations.logging import ignore_logger, ignore_logger_for_sentry_logs
from sentry_sdk.utils import event_from_exception

from reflex_lookout import event_tracing
from reflex_lookout.event_binding import client_fault

logger = logging.getLogger(__name__)
ignore_logger(__name__)
refused_logger = logging.getLogger(f"{__name__}.refused")  # neither an error event nor a Sentry log
ignore_logger(refused_logger.name)
ignore_logger_for_sentry_logs(refused_logger.name)

TOAST_ID = "lookout-backend-error"
TOAST_TITLE = "Something went wrong on our side."
STALE_TITLE = "This page is out of date."
REFUSED_LOGGED_MAX = 256  # (handler, exception type) pairs warned about once each, per process
_refused_logged: set[tuple[str, str]] = set()

processor: event_tracing.EventTransactions | None = None  # set when the server SDK starts


def backend_exception_handler(exception: Exception) -> EventSpec:
    """Report the exception once (with its event's scope) and tell the user, kindly; an event the
    client got wrong (`event_binding.client_fault`) is not reported, and the user is asked to reload."""
    with event_tracing.failed_event_scope(processor) as info:
        if client_fault(exception):
            _log_refused(info.handler if info else "?", exception)
            return _stale_toast()
        client = sentry_sdk.get_client()
        event, hint = event_from_exception(
            exception, client_options=client.options, mechanism={"type": "reflex", "handled": False},
        )
        event_id = sentry_sdk.capture_event(event, hint=hint)
        where = f" in {info.handler} on {info.route or '?'}" if info else ""
    logger.error("event handler failed%s (reported as %s)", where, event_id or "nothing: monitoring is off",
                 exc_info=exception)
    reference = f" Reference: {event_id[:8]}." if event_id else ""
    return _toast(TOAST_TITLE, f"The action did not complete; it has been reported.{reference}")


def _toast(title: str, description: str) -> EventSpec:
    """The one toast a failed event shows (a later failure replaces it: same id)."""
    return rx.toast.error(title, description=description, id=TOAST_ID, position="top-center", duration=8000)


@functools.cache
def _stale_toast() -> EventSpec:
    """The toast of an event the client got wrong, made once (an EventSpec is frozen): a client
    sending thousands of such events must not make Reflex build thousands of the same toast."""
    return _toast(STALE_TITLE, "Reload it and try again.")


def _log_refused(handler: str, exception: BaseException) -> None:
    key = (handler, type(exception).__name__)
    if key in _refused_logged or len(_refused_logged) >= REFUSED_LOGGED_MAX:
        return
    _refused_logged.add(key)
    refused_logger.warning("an event for %s could not be bound to it (%s: %s); not reported, further ones not logged",
                           handler, type(exception).__name__, str(exception)[:200])
