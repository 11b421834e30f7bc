"""The tag counter: adds the tag counts the ingest transactions queued (app/inbox/tag_index.py,
`inbox_tag_queue`) into the tag index, soon after, under a lease so that one worker does it.

Each step takes the oldest queue rows (up to `LIMIT`) and deletes them in the transaction that adds
their counts into the index, coalesced (one upsert per distinct issue, key and value, in sorted
order): a step that dies (SIGKILL, the database away) leaves its rows queued and nothing added, so
nothing is counted twice or lost. The database does the adding up (the queue's JSON taken apart by
`json_each`/`jsonb_each`, summed with GROUP BY): decoding and summing in Python cost the feeder's
process as much CPU as the upserts (bench/README.md). On SQLite the step's first statement is the
INSERT, so SQLite takes its write lock at once instead of failing a later upgrade; on PostgreSQL the
DELETE locks the rows, skipping those another step holds (`SKIP LOCKED`). Merging issues moves their
queue rows with them, unmerging and deleting an issue drop them (app/inbox/merge.py,
app/inbox/eviction.py); on PostgreSQL those wait for a step that holds the rows, then see what it
added.

`TagCounter.run` takes a step whenever the feeder has committed a batch (`wake`) and at least every
`idle_s`, no more often than every `interval_s` (so that a step adds up several batches), and at
once again while a step finds a full `LIMIT` of rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import anyio.to_thread
import sqlalchemy

from app.inbox.tables import TAG_QUEUE
from app.inbox.tag_index import upsert_rows
from reflex_lookout.background import FailureBackoff, Lease

logger = logging.getLogger(__name__)
LIMIT = 2000  # queue rows per step (a row holds one issue's counts of one ingest batch)
MAX_BACKOFF_S = 30.0


_OLDEST = f"SELECT id FROM {TAG_QUEUE.name} ORDER BY id LIMIT {{placeholder}}"
# SQLite, one writer at a time: the rows the INSERT reads are the ones the DELETE after it removes.
# Each queue row's JSON ("key\nvalue" → [count, first, last]: tag_index.TagCounts) is taken apart by
# json_each and summed per (issue, key, value) in the database, in sorted order.
SQLITE_ADD = upsert_rows("sqlite", (
    "SELECT q.issue_id, substr(e.key, 1, instr(e.key, char(10)) - 1), substr(e.key, instr(e.key, char(10)) + 1),"
    " sum(e.value ->> 0), min(e.value ->> 1), max(e.value ->> 2)"
    f" FROM {TAG_QUEUE.name} q, json_each(q.counts) e WHERE q.id IN ({_OLDEST.format(placeholder='?')})"
    " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"))
SQLITE_DELETE = f"DELETE FROM {TAG_QUEUE.name} WHERE id IN ({_OLDEST.format(placeholder='?')})"
# PostgreSQL: the DELETE takes the rows (skipping those another step holds) and feeds the INSERT, in
# one statement whose answer is the count of rows taken.
POSTGRESQL_STEP = (
    f"WITH taken AS (DELETE FROM {TAG_QUEUE.name} WHERE id IN ({_OLDEST.format(placeholder='%s')}"
    " FOR UPDATE SKIP LOCKED) RETURNING issue_id, counts), added AS (" + upsert_rows("postgresql", (
        "SELECT t.issue_id, split_part(e.key, chr(10), 1), substr(e.key, strpos(e.key, chr(10)) + 1),"
        " sum((e.value ->> 0)::bigint)::bigint, min((e.value ->> 1)::float8), max((e.value ->> 2)::float8)"
        " FROM taken t, jsonb_each(t.counts::jsonb) e"
        " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3")) + ") SELECT count(*) FROM taken")


def count_queued(engine: sqlalchemy.Engine, limit: int = LIMIT) -> int:
    """Add the oldest `limit` queue rows into the tag index and delete them, in one transaction;
    how many rows there were (0: the queue is empty)."""
    with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            return int(connection.exec_driver_sql(POSTGRESQL_STEP, (limit,)).scalar_one())
        # The INSERT is the step's first statement: SQLite takes its write lock at once.
        connection.exec_driver_sql(SQLITE_ADD, (limit,))
        return int(connection.exec_driver_sql(SQLITE_DELETE, (limit,)).rowcount)


def queued(engine: sqlalchemy.Engine) -> int:
    """How many queue rows wait."""
    with engine.connect() as connection:
        return int(connection.execute(sqlalchemy.select(sqlalchemy.func.count()).select_from(TAG_QUEUE)).scalar_one())


class TagCounter:
    """Takes `count_queued` steps while this worker holds `lease` (see the module's docstring)."""

    def __init__(self, engine: sqlalchemy.Engine, lease: Lease, limit: int = LIMIT, interval_s: float = 0.5,
                 idle_s: float = 1.0) -> None:
        self.engine, self.lease, self.limit = engine, lease, limit
        self.interval_s, self.idle_s = interval_s, idle_s
        self.counted = 0  # queue rows added into the index by this worker
        self.failures = 0
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """The feeder committed a batch: there is something to count."""
        self._wake.set()

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            await anyio.to_thread.run_sync(self.lease.release)

    async def _run(self) -> None:
        backoff = FailureBackoff("tag counter", MAX_BACKOFF_S, logger)
        while True:
            started = time.monotonic()
            self._wake.clear()
            try:
                taken = await self._step()
            except Exception as exc:  # noqa: BLE001 (FailureBackoff logs it; the database locked or away, or a bug: rows stay queued)
                self.failures += 1
                await asyncio.sleep(backoff.failed(exc, self.idle_s))
                continue
            backoff.succeeded()
            if taken is not None and taken >= self.limit:
                continue  # more waiting
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.idle_s):
                    await self._wake.wait()
            await asyncio.sleep(max(0.0, self.interval_s - (time.monotonic() - started)))

    async def _step(self) -> int | None:
        """One step when this worker holds the lease; the rows taken (None: another worker counts)."""
        if not await anyio.to_thread.run_sync(self.lease.keep):
            return None
        taken = await anyio.to_thread.run_sync(count_queued, self.engine, self.limit)
        self.counted += taken
        return taken
