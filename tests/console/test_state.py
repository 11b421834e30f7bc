"""Every console handler is a public endpoint: called in-process, as any websocket client could,
each one (enumerated from the app's state tree, so a new page is covered without a change here)
keeps the inbox's data from a client elsewhere, and shows it to this machine."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from reflex.state import State

import app.app  # noqa: F401 (registers every page's state)
from app.console import state as console
from app.console.state import ConsoleState
from app.inbox.search import IssueSearch
from tests.console.clients import LOOPBACK, MARKER, STRANGER, client_state, console_database, run, shown


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """The console's database (tests/console/clients.py), in place of the shared one (tests/databases.py)."""
    yield from console_database(tmp_path, monkeypatch)


def console_states() -> list[type[ConsoleState]]:
    found, todo = [], list(State.get_substates())
    while todo:
        state = todo.pop()
        todo.extend(state.get_substates())
        if issubclass(state, ConsoleState):
            found.append(state)
    return found


def statuses(engine: sqlalchemy.Engine) -> list[tuple[int, str]]:
    found = IssueSearch(engine).search("", limit=100).issues
    return [(issue["id"], issue["status"]) for issue in found]


def arguments(handler: Any, issue_id: int) -> list[list[object]]:
    """Plausible argument lists for a handler, from its signature."""
    parameters = list(inspect.signature(handler.fn).parameters.values())[1:]
    choices: list[list[object]] = [[]]
    for parameter in parameters:
        kind = parameter.annotation
        values: list[object] = {"int": [issue_id, 1, -1], "bool": [True, False]}.get(
            kind if isinstance(kind, str) else getattr(kind, "__name__", ""), ["", "checkout", "resolved", "all", "1"])
        choices = [chosen + [value] for chosen in choices for value in values]
    return choices


def every_call(issue_id: int) -> Iterator[tuple[type[ConsoleState], str, Any, list[object], str]]:
    paths = ["/", "/issues", f"/issue?id={issue_id}", "/traces", f"/trace?id={'a' * 32}", "/logs", "/nowhere"]
    for state_class in console_states():
        for name, handler in state_class.event_handlers.items():
            if name == "setvar":  # calls the state's own set_* handlers, which are called here themselves
                continue
            for args in arguments(handler, issue_id):
                for path in paths:
                    yield state_class, name, handler, args, path


@pytest.fixture
def quick_watch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(console, "REFRESH_S", 0.01)
    monkeypatch.setattr(console, "WATCH_FOR_S", 0.05)


def test_no_handler_shows_or_changes_anything_for_a_client_elsewhere(engine: sqlalchemy.Engine, quick_watch: None) -> None:
    before = statuses(engine)
    issue_id = before[0][0]
    calls = 0
    for state_class, name, handler, args, path in every_call(issue_id):
        state = client_state(state_class, STRANGER, path)
        asyncio.run(run(handler, state, args))
        calls += 1
        assert MARKER not in shown(state), (state_class.__name__, name, args, path)
    assert calls > 100
    assert statuses(engine) == before


def test_this_machine_sees_the_marker_through_the_same_handlers(engine: sqlalchemy.Engine, quick_watch: None) -> None:
    """The positive control: the enumeration reaches handlers that do read the inbox."""
    issue_id = statuses(engine)[0][0]
    seen: set[str] = set()
    for state_class, name, handler, args, path in every_call(issue_id):
        if name in ("act", "delete"):
            continue
        state = client_state(state_class, LOOPBACK, path)
        asyncio.run(run(handler, state, args))
        if MARKER in shown(state):
            seen.add(state_class.__name__)
    assert {"IssuesState", "IssueState", "TracesState", "TraceState", "LogsState", "FeedbackState"} <= seen


class LogReads:
    """Counts the /logs page's reads of its data (LogsState._read, patched for one test)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from app.pages.logs import LogsState

        self.count = 0
        original = LogsState._read

        async def counted(state: Any) -> None:
            self.count += 1
            await original(state)

        monkeypatch.setattr(LogsState, "_read", counted)


def test_a_watcher_is_refused_to_a_client_elsewhere_and_runs_once_per_client(
    engine: sqlalchemy.Engine, quick_watch: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.pages.logs import LogsState

    reads = LogReads(monkeypatch)

    async def two_watchers() -> tuple[int, int]:
        state = client_state(LogsState, LOOPBACK, "/logs")
        await asyncio.gather(run(LogsState.event_handlers["watch"], state, []),
                             run(LogsState.event_handlers["watch"], state, []))
        alone = reads.count
        stranger = client_state(LogsState, STRANGER, "/logs")
        reads.count = 0
        await run(LogsState.event_handlers["watch"], stranger, [])
        return alone, reads.count

    alone, stranger_reads = asyncio.run(two_watchers())
    assert 0 < alone <= int(console.WATCH_FOR_S / console.REFRESH_S) + 1  # one loop, not two
    assert stranger_reads == 0


def test_a_watcher_stops_once_its_tab_has_no_websocket(engine: sqlalchemy.Engine, quick_watch: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Reflex never ends a background task when its tab closes: the watcher asks on every turn whether
    its tab's socket is still open (app/app.py answers from Reflex's token table), and stops when not."""
    from app.pages.logs import LogsState

    open_tabs = {"open-tab"}
    monkeypatch.setattr(console, "connected", lambda token: token in open_tabs)
    monkeypatch.setattr(console, "WATCH_FOR_S", 0.5)  # an open tab's watcher turns many times in that, on a busy machine too

    reads = LogReads(monkeypatch)

    async def reads_of(token: str) -> int:
        state = client_state(LogsState, {**LOOPBACK, "sid": f"sid-{token}", "token": token}, "/logs")
        reads.count = 0
        await run(LogsState.event_handlers["watch"], state, [])
        return reads.count

    assert asyncio.run(reads_of("open-tab")) >= 1
    assert asyncio.run(reads_of("closed-tab")) == 0
