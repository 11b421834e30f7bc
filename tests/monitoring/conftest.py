"""A tunnel pipeline on a real SQLite file, and a real upstream on loopback."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest
import sentry_sdk
import sqlalchemy
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from app import db
from app.monitoring.forwarder import Forwarder
from app.monitoring.outbox import OutboxStore
from app.monitoring.stats import TunnelStats
from app.monitoring.tunnel import Tunnel
from app.protocol.ratelimits import RateLimits
from app.settings import Dsn, Settings
from tests.monitoring.upstream import Upstream


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def engine(database_url: str) -> sqlalchemy.Engine:
    """A migrated database: each test runs on SQLite and on PostgreSQL (tests/conftest.py)."""
    eng = db.engine(database_url)
    db.migrate(eng)
    return eng


@dataclass
class Pipeline:
    settings: Settings
    store: OutboxStore
    limits: RateLimits
    stats: TunnelStats
    tunnel: Tunnel
    client: httpx.AsyncClient
    forwarder: Forwarder | None = None

    async def post(self, body: bytes, **headers: str) -> httpx.Response:
        return await self.client.post(self.settings.tunnel_path, content=body, headers=headers)


def sentry_settings(upstream: Upstream, **changes: object) -> Settings:
    dsn = Dsn.parse(f"http://public@127.0.0.1:{upstream.port}/42")
    base = Settings.from_env({})
    fast = {"retry_base_s": 0.05, "retry_max_s": 0.2, "forward_timeout_s": 2.0}
    return dataclasses.replace(base, dsn=dsn, **{**fast, **changes})


@pytest.fixture
async def make_pipeline(engine: sqlalchemy.Engine) -> AsyncIterator:
    """make_pipeline(settings, forward=True) → a Pipeline serving the tunnel over ASGI (and forwarding)."""
    import asyncio

    made: list[tuple[Pipeline, asyncio.Task | None]] = []

    async def make(settings: Settings, forward: bool = True) -> Pipeline:
        store, limits, stats = OutboxStore(engine), RateLimits(), TunnelStats()
        forwarder = Forwarder(store, settings, limits, stats) if forward and settings.dsn else None
        tunnel = Tunnel(settings, store, limits, stats, on_commit=forwarder.wake if forwarder else lambda dsn: None)
        if forwarder is not None:
            forwarder.intake_busy = tunnel.busy
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=tunnel.asgi()), base_url="http://lookout.test"
        )
        task = asyncio.create_task(forwarder.run()) if forwarder else None
        pipeline = Pipeline(settings, store, limits, stats, tunnel, client, forwarder)
        made.append((pipeline, task))
        return pipeline

    yield make
    for pipeline, task in made:
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if pipeline.forwarder is not None:
            await pipeline.forwarder.aclose()
        await pipeline.tunnel.writer.close()
        await pipeline.client.aclose()


async def until(condition, timeout: float = 15) -> None:
    """Wait, without blocking the event loop (the forwarder runs on it), until `condition()`."""
    import asyncio

    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def accepted(upstream: Upstream, count: int, timeout: float = 15) -> list:
    await until(lambda: len(upstream.accepted) >= count, timeout)
    return upstream.accepted


class CapturingTransport(Transport):
    """Keeps every envelope sentry-sdk hands over (as sentry-sdk's own test-suite does)."""

    def __init__(self, options: dict | None = None) -> None:
        super().__init__(options)
        self.envelopes: list[Envelope] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        self.envelopes.append(envelope)

    def items(self, item_type: str) -> list[dict]:
        return [item.payload.json for envelope in self.envelopes for item in envelope.items if item.type == item_type]


@pytest.fixture
def sentry_init() -> Iterator:
    """sentry_init(**options) → sentry-sdk started for this test (closed after it)."""

    def init(**options: object) -> None:
        sentry_sdk.init(**options)

    yield init
    sentry_sdk.get_client().close()
    sentry_sdk.get_global_scope().set_client(None)
