"""The tag index of events stored before migration 0015: a bounded background pass.

Migration 0015 records the ids of the events it found (`inbox_backfill` row "tags": `next_id` to
`until_id`); events stored since are counted at ingest (app/inbox/tag_index.py) and have larger
ids, so each event is counted once. `backfill_step` indexes the next few of those events in one
transaction, exactly as ingest counts them, and moves `next_id` past them (the row goes when the
pass is done); `TagBackfill.run` takes steps in the background, under a lease so that one worker
runs it, pausing between steps so that the feeder keeps the database, and ends when it is done.
"""

from __future__ import annotations

import asyncio
import logging
import time

import anyio.to_thread
import sqlalchemy
from sqlalchemy import delete, select, update

from app.inbox.reading import KEPT, kept_events
from app.inbox.tables import BACKFILLS, EVENTS
from app.inbox.tag_index import TagCounts, derived_tags
from reflex_lookout.background import FailureBackoff, Lease

logger = logging.getLogger(__name__)
NAME = "tags"  # the inbox_backfill row migration 0015 inserts
LIMIT = 500  # events per step
MAX_BACKOFF_S = 60.0

THIS_PASS = BACKFILLS.c.name == NAME
NEXT_EVENTS = (
    select(EVENTS.c.id, EVENTS.c.issue_id, EVENTS.c.received_at, *KEPT)
    .where(EVENTS.c.id >= sqlalchemy.bindparam("next_id"), EVENTS.c.id <= sqlalchemy.bindparam("until_id"))
    .order_by(EVENTS.c.id).limit(sqlalchemy.bindparam("limit"))
)


def backfill_step(engine: sqlalchemy.Engine, limit: int = LIMIT) -> int:
    """Index the tags of the next `limit` events the pass has left, in one transaction; how many
    were indexed (0: nothing left). An event that cannot be read is skipped, logged."""
    with engine.begin() as connection:
        # The first statement writes: SQLite takes its write lock now rather than failing a later
        # upgrade, and PostgreSQL locks the row, so two steps never index the same events.
        if not connection.execute(update(BACKFILLS).where(THIS_PASS).values(next_id=BACKFILLS.c.next_id)).rowcount:
            return 0
        next_id, until_id = connection.execute(select(BACKFILLS.c.next_id, BACKFILLS.c.until_id).where(THIS_PASS)).one()
        rows = connection.execute(NEXT_EVENTS, {"next_id": next_id, "until_id": until_id, "limit": limit}).all()
        counts, indexed = TagCounts(), 0
        for row, event in zip(rows, kept_events(connection, [row[3:] for row in rows]), strict=True):
            try:
                tags = derived_tags(event) if event is not None else None
            except Exception:  # an event no SDK would send, stored before ingest read its tags
                logger.exception("the tags of stored event %s cannot be read", row.id)
                tags = None
            if tags is None:
                continue  # kept_events logged why
            counts.add(row.issue_id, tags, row.received_at)
            indexed += 1
        counts.write(connection)
        done = len(rows) < limit or rows[-1].id >= until_id
        if done:
            connection.execute(delete(BACKFILLS).where(THIS_PASS))
        else:
            connection.execute(update(BACKFILLS).where(THIS_PASS).values(next_id=rows[-1].id + 1))
    if done:
        logger.info("tag index: the events stored before migration 0015 are indexed")
    return indexed


def pending(engine: sqlalchemy.Engine) -> bool:
    """Whether the pass has events left."""
    with engine.connect() as connection:
        return connection.execute(select(BACKFILLS.c.name).where(THIS_PASS)).first() is not None


class TagBackfill:
    """Takes `backfill_step`s while this worker holds `lease`, until the pass is done."""

    def __init__(self, engine: sqlalchemy.Engine, lease: Lease, limit: int = LIMIT, pause_s: float = 0.5,
                 share: float = 0.2) -> None:
        """Between steps it pauses at least `pause_s`, and long enough that its steps take at most
        `share` of the time (the feeder waits for each, on SQLite)."""
        self.engine, self.lease, self.limit = engine, lease, limit
        self.pause_s, self.share = pause_s, share
        self.indexed = 0

    async def run(self) -> None:
        """Steps until the pass is done (at once if there is none); a failed step (the database
        away) is logged and tried again after a growing pause."""
        backoff = FailureBackoff("tag index pass", MAX_BACKOFF_S, logger)
        try:
            while True:
                started = time.monotonic()
                try:
                    if not await anyio.to_thread.run_sync(pending, self.engine):
                        return
                    if not await anyio.to_thread.run_sync(self.lease.keep):
                        await asyncio.sleep(self.pause_s)  # another worker runs the pass
                        continue
                    self.indexed += await anyio.to_thread.run_sync(backfill_step, self.engine, self.limit)
                except Exception as exc:  # noqa: BLE001 (FailureBackoff logs it)
                    await asyncio.sleep(backoff.failed(exc, self.pause_s))
                    continue
                backoff.succeeded()
                took = time.monotonic() - started
                await asyncio.sleep(max(self.pause_s, took * (1 - self.share) / self.share))
        finally:
            await anyio.to_thread.run_sync(self.lease.release)
