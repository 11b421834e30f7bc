"""The ingest tests' fixtures: Sentry's ingest endpoints on a tunnel and an inbox."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import sqlalchemy

from app.ingest.endpoints import Ingest
from app.ingest.store import InboxStore
from app.monitoring.outbox import OutboxStore
from app.monitoring.stats import TunnelStats
from app.monitoring.tunnel import Tunnel
from app.settings import Settings
from reflex_lookout.protocol.ratelimits import RateLimits


@pytest.fixture
async def ingest(engine: sqlalchemy.Engine, inbox: InboxStore) -> AsyncIterator[Ingest]:
    tunnel = Tunnel(Settings.from_env({}), OutboxStore(engine), RateLimits(), TunnelStats())
    made = Ingest(tunnel, inbox)
    yield made
    await tunnel.writer.close()
