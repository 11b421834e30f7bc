"""Work done once per backend process before it serves."""

import contextlib
import gc
import logging
from collections.abc import AsyncIterator

import sqlalchemy

from app import db
from app.projects.registry import settle_local_dsn
from app.settings import SETTINGS, Settings
from app.sourcemaps import library as sourcemap_library

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def prepare_process(
    settings: Settings = SETTINGS, engine: sqlalchemy.Engine | None = None
) -> AsyncIterator[None]:
    """Bring the database schema (of `engine`, by default the configured one) up to date, read this
    install's local DSN from it, import the source maps of the builds on disk
    (app/sourcemaps/library.py), then settle the heap.

    A prod worker is forked from a process that has used the database already: the connections
    in the pool it inherits are the parent's sockets, and sharing them corrupts both sides'
    sessions. `dispose(close=False)` forgets them here without closing them for the parent.

    Importing Reflex and SQLAlchemy leaves ~100k long-lived objects; every full garbage collection
    walked them all and stalled the event loop for 60–70 ms (the tunnel's p99, see bench/).
    `gc.freeze()` moves them out of the collector's sight.
    """
    engine = engine if engine is not None else db.engine()
    engine.dispose(close=False)
    revision = db.migrate(engine)
    logger.info("database schema at revision %s", revision)
    settle_local_dsn(settings, engine)  # the inbox's key, before anything reports with it
    # The maps of the builds on this machine, before serving (every worker; the first one imports).
    imported = sourcemap_library.import_present(engine, keep=settings.sourcemap_builds)
    logger.info("source maps of %d builds present (%s)", len(imported), ", ".join(imported) or "none built here")
    gc.collect()
    gc.freeze()
    yield
