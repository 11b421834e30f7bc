"""The /try page's status line: every action replaces it when it starts, and `/try?fail=on_load`,
whose failure only the browser sees (its on_load handler's script throws: Reflex tells
window.onerror, shows nothing), says which event reported it, as the buttons' cases do."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from app.pages import try_errors
from app.pages.try_errors import CASES, ON_LOAD_LABEL, TryState
from tests.console.clients import LOOPBACK, client_state, run


def state_at(path: str) -> Any:
    state = client_state(TryState, LOOPBACK, path)  # (any page's state: it only sets the router)
    state.confirmation = "Throw an error: sent as event 0123456789abcdef."  # an earlier action's line
    return state


def test_a_visit_starts_with_an_empty_status_line() -> None:
    state = state_at("/try")
    assert TryState.event_handlers["load"].fn(state) is None
    assert state.confirmation == ""


def test_fail_in_on_load_says_which_event_reported_the_error_its_script_threw() -> None:
    state = state_at("/try?fail=on_load")
    thrown, confirmed = TryState.event_handlers["load"].fn(state)
    assert state.confirmation == f"{ON_LOAD_LABEL}: …"  # not the earlier action's line
    assert "window.lookoutTry.onLoadScript()" in str(thrown.args[0][1])
    # Then, as a button's case: "<label>|<the SDK's last event id>" back to `confirm`.
    assert ON_LOAD_LABEL in str(confirmed.args[0][1]) and "lastEventId()" in str(confirmed.args[0][1])
    assert TryState.get_full_name() + ".confirm" in str(confirmed.args[1][1])
    TryState.event_handlers["confirm"].fn(state, f"{ON_LOAD_LABEL}|" + "ab" * 16)
    assert state.confirmation == f"{ON_LOAD_LABEL}: sent as event {'ab' * 16}."


@pytest.mark.parametrize(("element_id", "label", "javascript"), CASES)
def test_each_browser_case_first_replaces_the_status_line(element_id: str, label: str, javascript: str) -> None:
    [begin, *_] = try_errors.case_button(element_id, label, javascript).event_triggers["on_click"].events
    assert begin.handler.fn is TryState.event_handlers["begin"].fn
    state = state_at("/try")
    TryState.event_handlers["begin"].fn(state, label)
    assert state.confirmation == f"{label}: …"


def test_a_failing_handler_says_so_before_it_raises() -> None:
    state = state_at("/try")

    async def until_raised() -> None:
        steps = TryState.event_handlers["raise_error"].fn(state)
        await anext(steps)  # the update sent before the failure (a raising handler's own changes are not)
        assert state.confirmation.startswith("Fail in an event handler: it raised")
        with pytest.raises(RuntimeError, match="Lookout try: a backend error"):
            await anext(steps)

    asyncio.run(until_raised())


def test_the_slow_handler_and_the_render_error_replace_the_status_line_when_they_start() -> None:
    state = state_at("/try")

    async def first_step(name: str) -> None:
        steps = TryState.event_handlers[name].fn(state)
        await anext(steps)
        await steps.aclose()

    asyncio.run(first_step("slow_work"))
    assert state.confirmation == "Slow handler: running…"
    asyncio.run(first_step("break_rendering"))
    assert state.confirmation.startswith("Break rendering:") and state.bomb_armed


def test_the_page_compiles_with_its_status_line() -> None:
    compiled = str(try_errors.page())
    assert 'id:"try-confirmation"' in compiled and "try_state.begin" in compiled


def test_the_log_handler_replaces_the_status_line() -> None:
    state = state_at("/try")
    asyncio.run(run(TryState.event_handlers["write_log"], state, []))
    assert state.confirmation.startswith("Backend log line: written")
