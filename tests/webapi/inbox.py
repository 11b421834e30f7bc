"""A Lookout for the web API's tests: a SQLite file with two console users (ada, a maintainer; vic, a
viewer), a project "web" whose issues the real sentry-sdk made, and API tokens; the web API as the
app serves it (origin guard, CORS, the gate in front of the upload API), in process or on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import sentry_sdk
import sqlalchemy
import uvicorn
from starlette.types import ASGIApp

from app import db
from app.console.accounts import Accounts
from app.ingest.store import InboxStore
from app.origin_guard import OriginGuard
from app.projects.registry import Projects
from app.sourcemaps import upload_api
from app.webapi import routes
from app.webapi.cors import WebApiCors
from app.webapi.tokens import ApiTokens
from tests.factories import sentry_sdk_envelopes
from tests.services import free_port


@dataclass
class Inbox:
    engine: sqlalchemy.Engine
    project_id: int
    issues: dict[str, int] = field(default_factory=dict)  # the exception's value → its issue id
    events: dict[str, str] = field(default_factory=dict)  # the exception's value → its event id
    tokens: dict[str, str] = field(default_factory=dict)  # "ada", "ada-read", "vic" → secret
    dsn: str = ""  # the project's, for more of the SDK's envelopes


def _fail(value: str) -> None:
    raise ZeroDivisionError(value) if value.startswith("division") else KeyError(value)


def inbox(tmp: Path) -> Inbox:
    """The database and what the tests read and change in it."""
    engine = db.engine(f"sqlite:///{tmp / 'lookout.db'}")
    db.migrate(engine)
    accounts = Accounts(engine)
    accounts.add_user("ada", "maintainer", "correct horse battery")
    accounts.add_user("vic", "viewer", "correct horse battery")
    project = Projects(engine).add("web")
    dsn = project.dsn("127.0.0.1:9")
    found = Inbox(engine, project.id, dsn=dsn)
    store = InboxStore(engine)
    with sentry_sdk_envelopes(dsn=dsn, release="web@1.0.0", environment="production") as bodies:
        for value in ("division by zero", "missing-cart", "missing-user", "missing-cart"):
            try:
                _fail(value)
            except Exception:  # noqa: BLE001 - the SDK reports what was raised
                found.events[value] = sentry_sdk.capture_exception() or ""
    for body in bodies:
        store.ingest_envelope(body, dsn=dsn)
    with engine.connect() as connection:
        for value, event_id in found.events.items():
            found.issues[value] = connection.execute(
                sqlalchemy.text("SELECT issue_id FROM inbox_event WHERE event_id = :e"), {"e": event_id}).scalar_one()
    tokens = ApiTokens(engine)
    reading = ["org:read", "project:read", "event:read"]
    found.tokens = {"ada": tokens.add("ada")[1], "ada-read": tokens.add("ada", scopes=reading)[1], "vic": tokens.add("vic")[1]}
    return found


def served(engine: sqlalchemy.Engine) -> ASGIApp:
    """The web API as the app mounts it, in front of the upload API, inside the origin guard."""
    return OriginGuard(WebApiCors(routes.mount(engine)(upload_api.build(engine))))


def on_loopback(app: ASGIApp) -> Iterator[str]:
    """`app` served by uvicorn in a thread on a free loopback port, for a fixture to `yield from`: its host:port."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)
