"""The ingest tests' fixtures: Sentry's ingest endpoints on a tunnel and an inbox."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import sqlalchemy

from app.ingest.endpoints import Ingest
from app.ingest.store import InboxStore
from app.settings import Settings
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel


@pytest.fixture
async def ingest(engine: sqlalchemy.Engine, inbox: InboxStore) -> AsyncIterator[Ingest]:
    tunnel = Tunnel(Settings.from_env({}), OutboxStore(engine), RateLimits(), TunnelStats())
    made = Ingest(tunnel, inbox)
    yield made
    await tunnel.writer.close()
