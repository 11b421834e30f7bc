"""Work done once per backend process before it serves: bring the database schema up to date."""

import contextlib
import logging
from collections.abc import AsyncIterator

from app import db

logger = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def migrate_database() -> AsyncIterator[None]:
    revision = db.migrate(db.engine())
    logger.info("database schema at revision %s", revision)
    yield
