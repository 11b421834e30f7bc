"""Work done once per backend process before it serves."""

import contextlib
import gc
import logging
from collections.abc import AsyncIterator

from app import db

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def prepare_process() -> AsyncIterator[None]:
    """Bring the database schema up to date, then settle the heap.

    A prod worker is forked from a process that has used the database already: the connections
    in the pool it inherits are the parent's sockets, and sharing them corrupts both sides'
    sessions. `dispose(close=False)` forgets them here without closing them for the parent.

    Importing Reflex and SQLAlchemy leaves ~100k long-lived objects; every full garbage collection
    walked them all and stalled the event loop for 60–70 ms (the tunnel's p99, see bench/).
    `gc.freeze()` moves them out of the collector's sight.
    """
    db.engine().dispose(close=False)
    revision = db.migrate(db.engine())
    logger.info("database schema at revision %s", revision)
    gc.collect()
    gc.freeze()
    yield
