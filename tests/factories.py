"""What tests of several packages build and share: a clock, events and envelopes (hand-made, or
made by the real sentry-sdk), outbox rows, older installs' databases, and queries on what the inbox holds."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sentry_sdk
import sentry_sdk.envelope
import sentry_sdk.transport
import sqlalchemy
from alembic import command

from app import db
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from app.projects.filter_options import FilterOptions
from plugin_support.envelopes import build
from reflex_lookout.outbox import LOCAL, OutboxStore
from tests.environment import LOCAL_DSN

# A project's inbound filters all off (a new project has three on: app/projects/filter_options.py).
NO_FILTERS = FilterOptions(browser_extensions=False, web_crawlers=False, legacy_browsers=False)


def query(inbox: InboxStore, sql: str) -> list[tuple]:
    with inbox.engine.connect() as connection:
        return [tuple(row) for row in connection.execute(sqlalchemy.text(sql))]


def event_envelope(event: dict, dsn: str | None = LOCAL_DSN) -> bytes:
    return build(dsn, [("event", json.dumps(event).encode())])


def error(value: str, kind: str = "KeyError", event_id: str | None = None) -> dict:
    return {"event_id": event_id or uuid.uuid4().hex, "level": "error", "platform": "python",
            "exception": {"values": [{"type": kind, "value": value, "stacktrace": {"frames": [
                {"module": "app.pages.orders", "function": "checkout", "in_app": True}]}}]}}


def local_row(body: bytes, dsn: str = LOCAL_DSN) -> dict[str, object]:
    return {"dsn": dsn, "status": LOCAL, "received_at": time.time(), "size": len(body), "body": body}


READ = "read"  # a local row recorded in inbox_read


def statuses(engine: sqlalchemy.Engine) -> list[tuple]:
    """(status, last error) per outbox row; the status of a local row the feeder has read is READ."""
    with engine.connect() as connection:
        return [tuple(r) for r in connection.execute(sqlalchemy.text(
            "select case when exists (select 1 from inbox_read where outbox_id = outbox.id) then 'read' else status end,"
            " last_error from outbox order by id"))]


def local_rows(outbox: OutboxStore, bodies: list[bytes], at: float) -> None:
    outbox.add_many([{"dsn": LOCAL_DSN, "status": LOCAL, "received_at": at, "size": len(b), "body": b} for b in bodies])


def big_error(name: str, size: int = 30_000) -> dict:
    """An error with a fingerprint of its own and `size` bytes of extra data."""
    return {**error(f"'{name}'"), "fingerprint": [name], "extra": {"blob": "x" * size}}


def feed(outbox: OutboxStore, inbox: InboxStore, events: list[dict], at: float) -> None:
    local_rows(outbox, [event_envelope(event) for event in events], at)
    while InboxFeeder(outbox, inbox).feed_once():
        pass


def held_bytes(inbox: InboxStore) -> int:
    """What the inbox holds in the outbox (envelopes read or rejected), by the rows' own sizes."""
    [(size,)] = query(inbox, "select coalesce(sum(size), 0) from outbox")
    return int(size)


def titles(inbox: InboxStore) -> list[str]:
    return [title for (title,) in query(inbox, "select title from inbox_issue order by id")]


@contextlib.contextmanager
def as_of_revision(engine: sqlalchemy.Engine, revision: str) -> Iterator[None]:
    """A database as an install at `revision` left it: what the block writes, with today's writer,
    on a database at head, which is then downgraded to `revision` (each downgrade drops what its
    upgrade added). For the tests of what a later migration does to an older install's rows."""
    db.migrate(engine)
    yield
    with engine.begin() as connection:
        command.downgrade(db._alembic_config(connection), revision)


class KeptEnvelopes(sentry_sdk.transport.Transport):
    """A transport of the real sentry-sdk that keeps each envelope, serialized as it would be sent."""

    def __init__(self, options: dict | None = None) -> None:
        super().__init__(options)
        self.bodies: list[bytes] = []

    def capture_envelope(self, envelope: sentry_sdk.envelope.Envelope) -> None:
        self.bodies.append(envelope.serialize())


@contextlib.contextmanager
def sentry_sdk_envelopes(dsn: str = LOCAL_DSN, **options: object) -> Iterator[list[bytes]]:
    """The envelopes this process's real sentry-sdk makes inside the block (`sentry_sdk.capture_*`),
    kept instead of sent: `inbox.ingest_envelope(body)` stores each as if it had come through the tunnel."""
    for scope in (sentry_sdk.get_global_scope(), sentry_sdk.get_isolation_scope(), sentry_sdk.get_current_scope()):
        scope.clear()  # what an earlier test left on the scopes (tags, breadcrumbs) stays out
    transport = KeptEnvelopes()
    sentry_sdk.init(dsn=dsn, transport=transport, default_integrations=False, **options)  # type: ignore[arg-type]
    try:
        yield transport.bodies
        sentry_sdk.flush()
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.get_global_scope().set_client(None)


def store_all(inbox: InboxStore, bodies: list[bytes], dsn: str = LOCAL_DSN) -> None:
    """Store sentry-sdk's envelopes as the tunnel's outbox row would name them (its DSN: the SDK puts
    none in the envelope's header)."""
    for body in bodies:
        inbox.ingest_envelope(body, dsn=dsn)


SENTRY_CORE = Path(__file__).parents[1] / ".tools" / "node_modules" / "@sentry" / "core"


def sdk_feedback(dsn: str = LOCAL_DSN, **parameters: object) -> bytes:
    """The envelope Sentry's JavaScript SDK makes of `captureFeedback(parameters)` for `dsn`, release "shop@2.1"
    (tests/sdk_feedback.js; sentry-sdk for Python has no feedback API)."""
    if not SENTRY_CORE.exists():
        pytest.skip(f"{SENTRY_CORE} missing (`make setup` installs it with Sentry's MCP server)")
    sent = subprocess.run(["node", str(Path(__file__).parent / "sdk_feedback.js"), str(SENTRY_CORE), dsn,
                           json.dumps(parameters)], capture_output=True, timeout=60, check=False)
    assert sent.returncode == 0 and sent.stdout, sent.stderr.decode()
    return sent.stdout
