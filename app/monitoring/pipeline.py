"""The reporting pipeline of this backend process, built once from the settings.

    browser SDK ──POST──▶ tunnel ──commit──▶ outbox (SQL) ──forwarder──▶ Sentry
                                                  └── status "local" when no SENTRY_DSN (inbox)
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from app import db
from app.monitoring.forwarder import Forwarder
from app.monitoring.outbox import OutboxStore
from app.monitoring.ratelimits import RateLimits
from app.monitoring.settings import SETTINGS
from app.monitoring.stats import TunnelStats
from app.monitoring.tunnel import Tunnel

limits = RateLimits()
stats = TunnelStats()
store = OutboxStore(db.engine())
forwarder: Forwarder | None = None


def _wake_forwarder(dsn: str) -> None:
    if forwarder is not None:
        forwarder.wake(dsn)


tunnel = Tunnel(SETTINGS, store, limits, stats, on_commit=_wake_forwarder)


@contextlib.asynccontextmanager
async def run_forwarder() -> AsyncIterator[None]:
    """Lifespan task: deliver the outbox while the backend runs (only when a DSN is set)."""
    global forwarder
    task = None
    if SETTINGS.dsn is not None:
        forwarder = Forwarder(store, SETTINGS, limits, stats, intake_busy=tunnel.busy)
        task = asyncio.create_task(forwarder.run(), name="lookout-forwarder")
    try:
        yield
    finally:
        if task is not None and forwarder is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await forwarder.aclose()
        await tunnel.writer.close()
