"""Every console handler is a public endpoint: called in-process, as any websocket client could,
each one (enumerated from the app's state tree, so a new page is covered without a change here)
keeps the inbox's data from a client elsewhere, and shows it to this machine."""

from __future__ import annotations

import asyncio
import inspect
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from reflex.state import State

import app.app  # noqa: F401 (registers every page's state)
from app import db, wiring
from app.console import state as console
from app.console.state import ConsoleState
from app.inbox.reading import InboxReader
from app.ingest.store import InboxStore
from app.settings import SETTINGS
from tests.monitoring.envelopes import build

MARKER = f"marker-{uuid.uuid4().hex}"
STRANGER = {"ip": "203.0.113.9", "headers": {"host": "lookout.example:3000"}}
LOOPBACK = {"ip": "127.0.0.1", "headers": {"host": "localhost:3000"}}


def console_states() -> list[type[ConsoleState]]:
    found, todo = [], list(State.get_substates())
    while todo:
        state = todo.pop()
        todo.extend(state.get_substates())
        if issubclass(state, ConsoleState):
            found.append(state)
    return found


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """A real SQLite file holding the marker in an event, a transaction, a log line and feedback;
    the pages read it through `db.engine()`."""
    eng = db.engine(f"sqlite:///{tmp_path / 'console.db'}")
    db.migrate(eng)
    monkeypatch.setattr(db, "engine", lambda url=None: eng)
    monkeypatch.setattr(wiring.store, "engine", eng)  # the tunnel's figures on the home page
    dsn = str(SETTINGS.local_dsn)
    inbox = InboxStore(eng)
    inbox.ensure_project(SETTINGS.local_dsn)
    event = {"event_id": uuid.uuid4().hex, "level": "error", "platform": "python", "user": {"email": f"{MARKER}@x.example"},
             "breadcrumbs": {"values": [{"message": MARKER, "timestamp": 1.0}]},
             "exception": {"values": [{"type": "KeyError", "value": MARKER, "stacktrace": {"frames": [
                 {"module": "app.pages.orders", "function": MARKER, "in_app": True}]}}]}}
    trace_id = "a" * 32
    transaction = {"event_id": uuid.uuid4().hex, "type": "transaction", "transaction": MARKER, "platform": "python",
                   "start_timestamp": 100.0, "timestamp": 100.25,
                   "contexts": {"trace": {"trace_id": trace_id, "span_id": "b" * 16, "op": MARKER}}}
    logs = {"items": [{"timestamp": 100.1, "level": "error", "body": MARKER, "trace_id": trace_id}]}
    feedback = {"type": "feedback", "contexts": {"feedback": {"message": MARKER, "contact_email": "a@b.example",
                                                               "associated_event_id": event["event_id"]}}}
    inbox.ingest_envelope(build(dsn, [("event", json.dumps(event).encode())]))
    inbox.ingest_envelope(build(dsn, [("transaction", json.dumps(transaction).encode()),
                                      ("log", json.dumps(logs).encode()), ("feedback", json.dumps(feedback).encode())]))
    yield eng


def statuses(engine: sqlalchemy.Engine) -> list[tuple[int, str]]:
    found, _ = InboxReader(engine).issues(None, 100, 0)
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


def client_state(state_class: type[ConsoleState], who: dict[str, object], path: str) -> ConsoleState:
    root = State(_reflex_internal_init=True)
    data = {**who, "pathname": path.partition("?")[0], "asPath": path,
            "query": dict(p.split("=", 1) for p in path.partition("?")[2].split("&") if "=" in p), "token": "t"}
    root.router_data = root._update_router_vars(data, {})
    return root.get_substate(state_class.get_full_name().split(".")[1:])


async def run(handler: Any, state: ConsoleState, args: list[object]) -> None:
    result = handler.fn(state, *args)
    if inspect.isasyncgen(result):
        async for _ in result:
            pass
    elif inspect.iscoroutine(result):
        await result


def shown(state: ConsoleState) -> str:
    return json.dumps(state.dict(), default=str)


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
    assert {"IssuesState", "IssueState", "TracesState", "TraceState", "LogsState"} <= seen


def test_a_watcher_is_refused_to_a_client_elsewhere_and_runs_once_per_client(engine: sqlalchemy.Engine,
                                                                            quick_watch: None) -> None:
    from app.pages.logs import LogsState

    async def two_watchers() -> tuple[int, int]:
        state = client_state(LogsState, LOOPBACK, "/logs")
        reads = 0
        original = LogsState._read

        async def counted(self: Any) -> None:
            nonlocal reads
            reads += 1
            await original(self)

        LogsState._read = counted  # type: ignore[method-assign]
        try:
            await asyncio.gather(run(LogsState.event_handlers["watch"], state, []),
                                 run(LogsState.event_handlers["watch"], state, []))
            alone = reads
            stranger = client_state(LogsState, STRANGER, "/logs")
            reads = 0
            await run(LogsState.event_handlers["watch"], stranger, [])
            return alone, reads
        finally:
            LogsState._read = original  # type: ignore[method-assign]

    alone, stranger_reads = asyncio.run(two_watchers())
    assert 0 < alone <= int(console.WATCH_FOR_S / console.REFRESH_S) + 1  # one loop, not two
    assert stranger_reads == 0
