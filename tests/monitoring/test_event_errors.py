"""An event Reflex could not bind to its handler is the client's doing: no error report, a toast
asking for a reload, one warning line per handler and kind. The exceptions are Reflex's own, raised
by its real `process_event` on a real state; an error of the handler's own code is still reported.
(The report of a failed handler, with its event and trace: tests/monitoring/test_event_tracing.py.)"""

from __future__ import annotations

import asyncio
import logging

import pytest
import sentry_sdk
from reflex.state import State
from reflex_base.event.processor.base_state_processor import process_event

from app.settings import Settings
from plugin_support.helpers import CapturingTransport
from reflex_lookout import event_errors, server
from tests.environment import LOCAL_ENV


@pytest.fixture
def transport(sentry_init, monkeypatch: pytest.MonkeyPatch) -> CapturingTransport:
    captured = CapturingTransport()
    sentry_init(transport=captured, **server.server_options(Settings.from_env(LOCAL_ENV)))
    monkeypatch.setattr(event_errors, "_refused_logged", set())
    return captured


def raised_by_reflex(handler: str, payload: dict[str, object]) -> Exception:
    """What Reflex 0.10's `process_event` raises for this event sent to the root state."""
    root = State(_reflex_internal_init=True)
    with pytest.raises(Exception) as raised:
        asyncio.run(process_event(handler=State.event_handlers[handler], payload=payload, state=root, root_state=None))
    return raised.value


@pytest.mark.parametrize(("handler", "payload", "kind"), [
    ("setvar", {"var_name": "no_such_var", "value": 1}, AttributeError),  # a var with no setter
    ("set_is_hydrated", {}, TypeError),  # an argument missing
    ("set_is_hydrated", {"value": True, "extra": 1}, TypeError),  # an argument the handler does not take
])
def test_an_event_reflex_cannot_bind_is_not_reported_and_asks_for_a_reload(
    transport: CapturingTransport, caplog: pytest.LogCaptureFixture, handler: str, payload: dict[str, object],
    kind: type[Exception],
) -> None:
    exception = raised_by_reflex(handler, payload)
    assert type(exception) is kind
    with caplog.at_level(logging.WARNING, logger=event_errors.refused_logger.name):
        toasts = [event_errors.backend_exception_handler(exception) for _ in range(3)]
    sentry_sdk.flush()
    assert transport.items("event") == []
    assert all(event_errors.STALE_TITLE in str(toast) for toast in toasts)
    assert toasts[0] is toasts[1] is toasts[2]  # made once: a flood of such events builds no toast again
    refused = [r for r in caplog.records if r.name == event_errors.refused_logger.name]
    assert len(refused) == 1 and kind.__name__ in refused[0].getMessage()  # once per handler and kind


def test_a_type_error_of_the_handlers_own_code_is_reported(transport: CapturingTransport) -> None:
    def handler_body() -> None:
        raise TypeError("Lookout test: the handler's own TypeError")

    with pytest.raises(TypeError) as raised:
        handler_body()
    toast = event_errors.backend_exception_handler(raised.value)
    sentry_sdk.flush()
    [event] = transport.items("event")
    assert event["exception"]["values"][-1]["value"] == "Lookout test: the handler's own TypeError"
    assert event_errors.TOAST_TITLE in str(toast)


def test_the_warnings_are_bounded_whatever_a_client_invents(transport: CapturingTransport,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    exception = raised_by_reflex("set_is_hydrated", {})
    with caplog.at_level(logging.WARNING, logger=event_errors.refused_logger.name):
        for n in range(event_errors.REFUSED_LOGGED_MAX + 50):
            event_errors._log_refused(f"state.made_up_{n}", exception)
    assert len([r for r in caplog.records if r.name == event_errors.refused_logger.name]) == event_errors.REFUSED_LOGGED_MAX
    assert len(event_errors._refused_logged) == event_errors.REFUSED_LOGGED_MAX
