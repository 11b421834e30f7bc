"""Local mode: envelopes the tunnel and the server SDK committed to the outbox as "local" rows are
read into the inbox, oldest first, as soon as they are committed (or within a second); every
minute, retention (app/inbox/retention.py) keeps the inbox under its caps.

A row read is recorded in `inbox_read`, in the transaction that stored its contents, so none is
read twice. The row itself stays: it is the stored copy of its events (the inbox keeps where they
are, not a second copy) and of the item types the inbox does not read. A row that cannot be read
(an unknown project, a broken event, anything that goes wrong with it alone) is marked "rejected"
with the reason, so it is never retried in a loop and nothing is silently lost. When the database
itself fails (locked, restarting), the batch stays unread and is tried again; so is everything after
any other unexpected error, which is logged: the feeder keeps going, waiting longer after each
failure in a row (from `idle_s` doubling to MAX_BACKOFF_S) so that it never spins.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence

import anyio.to_thread
import sqlalchemy
import sqlalchemy.exc
from sqlalchemy import exists, insert, select

from app.inbox.retention import Retention
from app.inbox.tables import READ
from app.ingest.incoming import READ_ERRORS, Incoming, Ingested
from app.ingest.store import InboxStore
from reflex_lookout.background import Lease
from reflex_lookout.outbox import LOCAL, REJECTED, OutboxStore
from reflex_lookout.tables import OUTBOX

logger = logging.getLogger(__name__)
BATCH = 200
MAX_BACKOFF_S = 30.0

# Two steps: the ids from the status index, then the rows. One query ordering whole rows by id
# made SQLite sort every waiting row's body for each batch.
UNREAD_IDS = (
    select(OUTBOX.c.id)
    .where(OUTBOX.c.status == LOCAL, ~exists().where(READ.c.outbox_id == OUTBOX.c.id))
    .order_by(OUTBOX.c.id).limit(sqlalchemy.bindparam("limit"))
)
ROWS = select(OUTBOX.c.id, OUTBOX.c.dsn, OUTBOX.c.body, OUTBOX.c.content_encoding, OUTBOX.c.received_at).where(
    OUTBOX.c.id.in_(sqlalchemy.bindparam("ids", expanding=True))
).order_by(OUTBOX.c.id)


class InboxFeeder:
    def __init__(self, outbox: OutboxStore, inbox: InboxStore, idle_s: float = 1.0,
                 retention: Retention | None = None, retention_every_s: float = 60.0,
                 lease: Lease | None = None, on_fed: Callable[[], None] | None = None) -> None:
        """`lease`: with several workers, only its holder feeds (reflex_lookout/background.py).
        `on_fed()`: called on the event loop after a batch is committed (the alert sender wakes)."""
        self.outbox = outbox
        self.inbox = inbox
        self.idle_s = idle_s
        self.retention = retention
        self.retention_every_s = retention_every_s
        self.lease = lease
        self.on_fed = on_fed
        self._retained_at = float("-inf")
        self.ingested = 0
        self.rejected = 0
        self.failures = 0  # turns that failed (the database refused a batch, or anything else): retried
        self._wake = asyncio.Event()

    def wake(self, dsn: str | None = None) -> None:
        self._wake.set()

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            if self.lease is not None:
                await anyio.to_thread.run_sync(self.lease.release)

    async def _run(self) -> None:
        failed_in_a_row = 0
        while True:
            self._wake.clear()
            try:
                fed = await self._turn()
            except Exception as exc:  # whatever it was, the next turn tries again
                self.failures += 1
                wait = min(self.idle_s * 2**failed_in_a_row, MAX_BACKOFF_S)
                failed_in_a_row += 1
                if isinstance(exc, sqlalchemy.exc.SQLAlchemyError):  # the database is locked or away
                    logger.warning("inbox feeder: %s; trying again in %.1f s", exc, wait)
                else:
                    logger.exception("inbox feeder: unexpected error; trying again in %.1f s", wait)
                await asyncio.sleep(wait)
                continue
            failed_in_a_row = 0
            if fed is None:
                await asyncio.sleep(self.idle_s)  # another worker feeds (or the database is away)
            elif fed < BATCH:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.idle_s):  # not wait_for: see Forwarder.run
                        await self._wake.wait()

    async def _turn(self) -> int | None:
        """Retention when due, then one batch; how many rows were read (None: not this worker's turn)."""
        if self.lease is not None and not await anyio.to_thread.run_sync(self.lease.keep):
            return None
        if self.retention is not None and time.monotonic() - self._retained_at > self.retention_every_s:
            self._retained_at = time.monotonic()
            evicted = await anyio.to_thread.run_sync(self.retention.run)
            logger.info("inbox retention: %s", evicted)
        fed = await anyio.to_thread.run_sync(self.feed_once)
        if fed and self.on_fed is not None:
            self.on_fed()
        return fed

    def unread(self, limit: int = BATCH) -> list[Incoming]:
        """The oldest local rows the inbox has not read yet."""
        with self.outbox.engine.connect() as connection:
            ids = connection.execute(UNREAD_IDS, {"limit": limit}).scalars().all()
            rows = connection.execute(ROWS, {"ids": ids}).all() if ids else []
        return [Incoming(body, encoding, received_at, dsn, row_id) for row_id, dsn, body, encoding, received_at in rows]

    def feed_once(self) -> int:
        """Read one batch of local rows into the inbox; how many rows there were. `ingested` and
        `rejected` count a batch once its transaction has committed (a reader that sees them move
        sees the rows' new status)."""
        batch = self.unread()
        results = self.inbox.ingest_batch(batch, self._mark)  # returns once its transactions committed
        rejected = sum(isinstance(result, Exception) for result in results)
        self.ingested += len(results) - rejected
        self.rejected += rejected
        return len(batch)

    def _mark(self, connection: sqlalchemy.Connection, batch: Sequence[Incoming],
              results: list[Ingested | Exception]) -> None:
        """Record the rows as read, in the transaction that stored what they hold."""
        read = []
        for incoming, result in zip(batch, results, strict=False):
            if isinstance(result, Exception):
                reason = _reason(result)
                logger.warning("outbox row %s was not read into the inbox: %s", incoming.row_id, reason)
                # (every row the feeder reads is an outbox row: row_id is set)
                self.outbox.set_status([] if incoming.row_id is None else [incoming.row_id], REJECTED, reason, connection)
            else:
                read.append({"outbox_id": incoming.row_id, "read_at": time.time()})
        if read:
            connection.execute(insert(READ), read)


def _reason(error: Exception) -> str:
    """Why a row was rejected, in a sentence: an unexpected kind of error also says which it was."""
    text = str(error)[:500]
    return text if isinstance(error, READ_ERRORS) and text else f"{type(error).__name__}: {text}".rstrip(": ")
