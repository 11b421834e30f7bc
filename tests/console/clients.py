"""Console clients for tests of the console's state and of the pages: a page's state as a client
from this machine or from elsewhere would have it, signed in or not, running handlers, and what the state
shows; a database holding one of each thing the console reads (`console_database`, a module's `engine`)."""

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
from reflex.istate.manager.disk import StateManagerDisk
from reflex.istate.manager.token import BaseStateToken
from reflex.state import BaseState, State

import app.app  # noqa: F401 (registers every page's state)
from app import db
from app.console import state as console
from app.console.accounts import COOKIE, Accounts, Viewer
from app.console.state import ConsoleState
from app.ingest.store import InboxStore
from app.local_inbox import outbox_store
from app.settings import SETTINGS
from plugin_support.envelopes import build
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel

STRANGER = {"ip": "203.0.113.9", "headers": {"host": "lookout.example:3000"}}


LOOPBACK = {"ip": "127.0.0.1", "headers": {"host": "localhost:3000"}}


def console_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """For an `engine` fixture: a real SQLite file holding the marker in an event, a transaction, a log line and feedback;
    the pages read it through `console.database()`."""
    eng = db.engine(f"sqlite:///{tmp_path / 'console.db'}")
    db.migrate(eng)
    console.use_database(eng)  # the pages' database (app/console/state.py), until the test ends
    serve_console_in(eng)
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
    console.use_database(None)
    console.serve_in()


def serve_console_in(engine: sqlalchemy.Engine) -> None:
    """The backend process's part of the console (app/console/state.py `serve_in`): a tunnel whose outbox
    is in `engine`, for the home page's figures; every tab counts as connected."""
    console.serve_in(tunnel_snapshot=Tunnel(SETTINGS, outbox_store(engine), RateLimits(), TunnelStats()).snapshot)


def client_state(state_class: type[ConsoleState], who: dict[str, object], path: str) -> ConsoleState:
    root = State(_reflex_internal_init=True)
    data = {"token": "t", **who, "pathname": path.partition("?")[0], "asPath": path,
            "query": dict(p.split("=", 1) for p in path.partition("?")[2].split("&") if "=" in p)}
    root.router_data = root._update_router_vars(data, {})
    return root.get_substate(state_class.get_full_name().split(".")[1:])


async def run(handler: Any, state: ConsoleState, args: list[object]) -> None:
    result = handler.fn(state, *args)
    if inspect.isasyncgen(result):
        async for _ in result:
            pass
    elif inspect.iscoroutine(result):
        await result


def call(state: ConsoleState, name: str, *args: object) -> None:
    """Run the state's handler `name` with `args`, as a client's event does."""
    asyncio.run(run(type(state).event_handlers[name], state, list(args)))


def opened(state_class: type[ConsoleState], who: dict[str, object], path: str) -> ConsoleState:
    """The state of a client that opened the page at `path` (its `load` has run)."""
    state = client_state(state_class, who, path)
    call(state, "load")
    return state


async def persisted(state: ConsoleState) -> tuple[bytes, BaseState]:
    """What Reflex's disk state manager writes of the client's whole state tree (every file's bytes,
    joined; in the tests' REFLEX_STATES_WORKDIR), and the tree a new manager reads back from it (as
    after a restart)."""
    root: BaseState = state
    while root.parent_state is not None:
        root = root.parent_state
    token = BaseStateToken(ident=uuid.uuid4().hex, cls=type(root))
    writer = StateManagerDisk(_write_debounce_seconds=0)  # written at once, as without the debounce
    await writer.set_state(token, root)
    await writer.close()
    tree, files = [root], []
    while tree:
        one = tree.pop()
        tree.extend(one.substates.values())
        files.append(writer.token_path(token.with_cls(type(one))))
    written = b"".join(path.read_bytes() for path in files if path.exists())
    reader = StateManagerDisk()
    try:
        return written, await reader.get_state(token)
    finally:
        await reader.close()


def shown(state: ConsoleState) -> str:
    return json.dumps(state.dict(), default=str)


def with_users(engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console's accounts on `engine`, as the pages read them, with a viewer "vera" and a
    maintainer "max" (`signed_in(engine, "max", "maintainer")` signs one in)."""
    accounts = Accounts(engine, from_env={})
    console.use_database(engine, accounts)
    for name, role in (("vera", "viewer"), ("max", "maintainer")):
        accounts.add_user(name, role, f"{name}-password")


def signed_in(engine: sqlalchemy.Engine, name: str, role: str) -> dict[str, object]:
    token = console.accounts().start_session(Viewer(name, role))
    return {"ip": "203.0.113.9", "headers": {"host": "lookout.example:3000", "cookie": f"{COOKIE}={token}"}}


MARKER = f"marker-{uuid.uuid4().hex}"
