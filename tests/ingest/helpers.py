"""What the ingest endpoints' tests share: a client of the endpoints over ASGI, the same endpoints
served on a real port of 127.0.0.1 (for real clients), the inbox's copy of an event, an inbox on a
SQLite file alone (for tests that need no PostgreSQL) and a clock the test sets."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import sqlalchemy
import uvicorn

from app import db
from app.inbox.reading import InboxReader
from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from reflex_lookout.dsn import Dsn
from reflex_lookout.protocol.asgi import Receive, Scope, Send, respond
from tests.environment import LOCAL_DSN


async def not_found(scope: Scope, receive: Receive, send: Send) -> None:
    await respond(send, 404, b'{"detail":"Not Found"}')


def http(ingest: Ingest) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=ingest.asgi(not_found)), base_url="http://lookout.test")


def in_inbox(ingest: Ingest, event_id: str) -> dict | None:
    """The inbox's event `event_id`, once the feeder has read the outbox (None if it is not there)."""
    InboxFeeder(ingest.tunnel.store, ingest.inbox).feed_once()
    return InboxReader(ingest.inbox.engine).event(event_id)


@contextlib.asynccontextmanager
async def served(ingest: Ingest) -> AsyncIterator[int]:
    """The endpoints served by uvicorn on a free port of 127.0.0.1, on the running event loop
    (where the tunnel's writer runs); yields the port."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(ingest.asgi(not_found), loop="asyncio", http="h11", interface="asgi3",
                            lifespan="off", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(10):
            while not server.started:
                if task.done():
                    task.result()  # its error, if it failed to start
                await asyncio.sleep(0.005)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        await task
        sock.close()


def sqlite_inbox(tmp_path: Path) -> sqlalchemy.Engine:
    """A migrated SQLite file with the local project (1)."""
    engine = db.migrated_engine(f"sqlite:///{tmp_path / 'inbox.db'}")
    InboxStore(engine).ensure_project(Dsn.parse(LOCAL_DSN))
    return engine


class Clock:
    """Epoch seconds, as the test sets them (`now`)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
