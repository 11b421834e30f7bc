"""What happens when a Reflex event handler raises: one error report, and a toast for the user.

Reflex calls `App.backend_exception_handler` with the exception after the handler's task ended,
with the failed event's OpenTelemetry context attached; `event_tracing` kept that event's Sentry
scopes, so the report carries the event, its route and session, and the event's transaction (one
trace with the browser's click). The traceback is still logged for the terminal, by a logger that
sentry-sdk's logging integration leaves out of error events (no second copy of the same error).
"""

from __future__ import annotations

import logging

import reflex as rx
import sentry_sdk
from reflex_base.event import EventSpec
from sentry_sdk.integrations.logging import ignore_logger
from sentry_sdk.utils import event_from_exception

from app.monitoring import event_tracing

logger = logging.getLogger(__name__)
ignore_logger(__name__)

TOAST_ID = "lookout-backend-error"
TOAST_TITLE = "Something went wrong on our side."

processor: event_tracing.EventTransactions | None = None  # set when the server SDK starts


def backend_exception_handler(exception: Exception) -> EventSpec:
    """Report the exception once (with its event's scope) and tell the user, kindly."""
    with event_tracing.failed_event_scope(processor) as info:
        client = sentry_sdk.get_client()
        event, hint = event_from_exception(
            exception, client_options=client.options, mechanism={"type": "reflex", "handled": False},
        )
        event_id = sentry_sdk.capture_event(event, hint=hint)
        where = f" in {info.handler} on {info.route or '?'}" if info else ""
    logger.error("event handler failed%s (reported as %s)", where, event_id or "nothing: monitoring is off",
                 exc_info=exception)
    reference = f" Reference: {event_id[:8]}." if event_id else ""
    return rx.toast.error(
        TOAST_TITLE,
        description=f"The action did not complete; it has been reported.{reference}",
        id=TOAST_ID,
        position="top-center",
        duration=8000,
    )
