"""A tunnel pipeline on the `engine` fixture's database (plugin_support/databases.py in the plugin's
tests, tests/databases.py in Lookout's), and a real upstream on loopback: fixtures, which a conftest.py
imports to offer them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx
import pytest
import sqlalchemy

from plugin_support.upstream import Upstream
from reflex_lookout.forwarder import Forwarder
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@dataclass
class Pipeline:
    settings: MonitoringSettings
    store: OutboxStore
    limits: RateLimits
    stats: TunnelStats
    tunnel: Tunnel
    client: httpx.AsyncClient
    forwarder: Forwarder | None = None

    async def post(self, body: bytes, **headers: str) -> httpx.Response:
        return await self.client.post(self.settings.tunnel_path, content=body, headers=headers)


@pytest.fixture
async def make_pipeline(engine: sqlalchemy.Engine) -> AsyncIterator:
    """make_pipeline(settings, forward=True) → a Pipeline serving the tunnel over ASGI (and forwarding)."""
    import asyncio

    made: list[tuple[Pipeline, asyncio.Task | None]] = []

    async def make(settings: MonitoringSettings, forward: bool = True) -> Pipeline:
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


def rows(pipeline: Pipeline) -> list[dict]:
    """The outbox's rows, oldest first."""
    with pipeline.store.engine.connect() as connection:
        return [dict(r._mapping) for r in connection.execute(sqlalchemy.text("select * from outbox order by id"))]
