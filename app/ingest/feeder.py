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

On SQLite, whose writes take turns anyway, one worker feeds: the holder of the feeder's lease. On
PostgreSQL every worker feeds:
- a batch's rows are claimed in the transaction that stores them (`SELECT … FOR UPDATE SKIP LOCKED`:
  a row another feeder's transaction holds is skipped, not waited for), then read again once locked
  (a row another feeder committed as read or rejected in between is left out);
- the batch is written in savepoints of that transaction (app/ingest/store.py `ingest_batch`), so the
  claim holds through every retry; a feeder that dies (SIGKILL, the database restarting) leaves its
  rows unread and unlocked for the others;
- an envelope is written only while the transaction holds the keys of the issues and count rows it
  adds to (store.py `Keys`, taken without waiting): one whose keys another feeder holds is set aside,
  its row left unread, and tried again first in the next batch, as it was read; one set aside
  SET_ASIDE_AT_MOST times, or all of them after a batch that wrote nothing, are waited for at the
  start of the next transaction, when it holds nothing another feeder waits for (so a hot issue's
  events are written by one feeder at a time, no feeder spins, and none waits in a circle).
Retention runs in one worker at a time, the holder of its own lease ("inbox-retention"), renewed
while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import anyio.to_thread
import sqlalchemy
import sqlalchemy.exc
from sqlalchemy import exists, insert, select

from app.inbox.retention import Evicted, Retention
from app.inbox.tables import READ
from app.ingest.incoming import READ_ERRORS, Incoming, Ingested, Readable
from app.ingest.issue_keys import keys_of, lock
from app.ingest.store import InboxStore
from reflex_lookout.background import RENEW_S, Lease
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
# PostgreSQL, several feeders: the ids are claimed (locked until the transaction that stores the rows
# ends), skipping rows another feeder holds: fresh ones (besides those claimed again, `taken`: a
# transaction's own locks do not make a row skipped), and again those of envelopes set aside. Then
# the rows are read again once locked (a statement of its own sees what committed before: a row
# another feeder stored or rejected between the claim's snapshot and its lock is left out, so none
# is read twice).
CLAIM_IDS = (select(OUTBOX.c.id)
             .where(OUTBOX.c.status == LOCAL, ~exists().where(READ.c.outbox_id == OUTBOX.c.id),
                    OUTBOX.c.id.not_in(sqlalchemy.bindparam("taken", expanding=True)))
             .order_by(OUTBOX.c.id).limit(sqlalchemy.bindparam("limit")).with_for_update(of=OUTBOX, skip_locked=True))
RECLAIM_IDS = select(OUTBOX.c.id).where(OUTBOX.c.id.in_(sqlalchemy.bindparam("ids", expanding=True))).order_by(
    OUTBOX.c.id).with_for_update(skip_locked=True)
STILL_UNREAD = ~exists().where(READ.c.outbox_id == OUTBOX.c.id)
CLAIMED_ROWS = ROWS.where(OUTBOX.c.status == LOCAL, STILL_UNREAD)
CLAIMED_IDS = select(OUTBOX.c.id).where(OUTBOX.c.id.in_(sqlalchemy.bindparam("ids", expanding=True)),
                                        OUTBOX.c.status == LOCAL, STILL_UNREAD)
SET_ASIDE_AT_MOST = 3  # times an envelope is set aside before its keys are waited for


@dataclass
class SetAside:
    """An envelope a batch set aside (another feeder held its keys), as it was read."""
    incoming: Incoming
    read: Readable
    times: int = 1


class InboxFeeder:
    def __init__(self, outbox: OutboxStore, inbox: InboxStore, idle_s: float = 1.0,
                 retention: Retention | None = None, retention_every_s: float = 60.0,
                 lease: Lease | None = None, on_fed: Callable[[], None] | None = None,
                 retention_lease: Lease | None = None, batch: int = BATCH, claims: bool | None = None) -> None:
        """`lease`: with several workers, only its holder feeds (reflex_lookout/background.py; SQLite).
        `retention_lease`: only its holder runs retention. `on_fed()`: called on the event loop after
        a batch is committed (the alert sender wakes). `claims`: whether batches are claimed (see the
        module's docstring; by default on PostgreSQL)."""
        self.outbox = outbox
        self.inbox = inbox
        self.idle_s = idle_s
        self.retention = retention
        self.retention_every_s = retention_every_s
        self.lease = lease
        self.retention_lease = retention_lease
        self.on_fed = on_fed
        self.batch = batch
        self.claims = outbox.engine.dialect.name == "postgresql" if claims is None else claims
        self.set_aside: list[SetAside] = []  # claiming: envelopes to try again first
        self.waited = 0  # claiming: envelopes set aside whose keys a batch waited for
        self._wrote_none = False  # claiming: the last batch set every envelope aside
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
            for lease in (self.lease, self.retention_lease):
                if lease is not None:
                    await anyio.to_thread.run_sync(lease.release)

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
            # Drained (claiming: a batch short of rows may mean another feeder holds the rest, or some
            # came meanwhile; only an empty one tells), and nothing set aside to try again.
            elif (fed == 0 if self.claims else fed < self.batch) and not self.set_aside:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.idle_s):  # not wait_for: see Forwarder.run
                        await self._wake.wait()

    async def _turn(self) -> int | None:
        """Retention when due, then one batch; how many rows were read (None: not this worker's turn)."""
        if self.lease is not None and not await anyio.to_thread.run_sync(self.lease.keep):
            return None
        if self.retention is not None:
            due = time.monotonic() - self._retained_at > self.retention_every_s
            if await self._retains(due) and due:
                self._retained_at = time.monotonic()
                evicted = await self._holding(self.retention_lease, self.retention.run)
                logger.info("inbox retention: %s", evicted)
            elif due:
                self._retained_at = time.monotonic()  # another worker retains: asked again when due again
        fed = await anyio.to_thread.run_sync(self.feed_once)
        if fed and self.on_fed is not None:
            self.on_fed()
        return fed

    async def _retains(self, due: bool) -> bool:
        """Whether this worker runs retention: it holds the retention lease (renewed here on every
        turn, so that it keeps it between runs; a worker without it asks only when retention is due)."""
        lease = self.retention_lease
        if lease is None:
            return True
        return (lease.held or due) and await anyio.to_thread.run_sync(lease.keep)

    async def _holding(self, lease: Lease | None, work: Callable[[], Evicted]) -> Evicted:
        """`work()` on a worker thread, renewing `lease` every RENEW_S while it runs (a long run must
        not let the lease expire and another worker start the same work)."""
        running = asyncio.ensure_future(anyio.to_thread.run_sync(work))
        try:
            while True:
                done, _ = await asyncio.wait({running}, timeout=RENEW_S)
                if done:
                    return running.result()
                if lease is not None:
                    await anyio.to_thread.run_sync(lease.hold)
        finally:
            if not running.done():  # cancelled (shutdown): the thread ends its run first
                running.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await running

    def unread(self, limit: int = BATCH) -> list[Incoming]:
        """The oldest local rows the inbox has not read yet."""
        with self.outbox.engine.connect() as connection:
            ids = connection.execute(UNREAD_IDS, {"limit": limit}).scalars().all()
            rows = connection.execute(ROWS, {"ids": ids}).all() if ids else []
        return [Incoming(body, encoding, received_at, dsn, row_id) for row_id, dsn, body, encoding, received_at in rows]

    def claim(self, connection: sqlalchemy.Connection, limit: int = BATCH, taken: Sequence[int] = ()) -> list[Incoming]:
        """PostgreSQL: the oldest local rows the inbox has not read yet and no other transaction
        holds (nor is among `taken`), locked by `connection`'s transaction until it ends."""
        ids = connection.execute(CLAIM_IDS, {"limit": limit, "taken": list(taken)}).scalars().all()
        rows = connection.execute(CLAIMED_ROWS, {"ids": ids}).all() if ids else []
        return [Incoming(body, encoding, received_at, dsn, row_id) for row_id, dsn, body, encoding, received_at in rows]

    def reclaim(self, connection: sqlalchemy.Connection) -> list[SetAside]:
        """The envelopes set aside whose rows are still unread and no other transaction holds, their
        rows locked by `connection`'s transaction (the others went to another feeder)."""
        ids = [waiting.incoming.row_id for waiting in self.set_aside]
        locked = connection.execute(RECLAIM_IDS, {"ids": ids}).scalars().all() if ids else []
        unread = set(connection.execute(CLAIMED_IDS, {"ids": locked}).scalars()) if locked else set()
        return [waiting for waiting in self.set_aside if waiting.incoming.row_id in unread]

    def feed_once(self) -> int:
        """Read one batch of local rows into the inbox; how many rows there were (claimed, on
        PostgreSQL: 0 also when every waiting row is another feeder's). `ingested` and `rejected`
        count a batch once its transaction has committed (a reader that sees them move sees the
        rows' new status)."""
        if not self.claims:
            batch = self.unread(self.batch)
            results = self.inbox.ingest_batch(batch, self._mark)  # returns once its transactions committed
        else:
            aside: list[tuple[Incoming, Readable]] = []
            with self.outbox.engine.begin() as connection:  # the claim's transaction stores the rows
                again = self.reclaim(connection)
                waited = again if self._wrote_none else [w for w in again if w.times >= SET_ASIDE_AT_MOST]
                # Holding nothing yet that another feeder would wait for (its claims skip these rows).
                lock(connection, frozenset().union(*(keys_of(w.read) for w in waited)))
                self.waited += len(waited)
                fresh = self.claim(connection, max(0, self.batch - len(again)), [w.incoming.row_id or 0 for w in again])
                batch = [w.incoming for w in again] + fresh
                read = [w.read for w in again] + self.inbox.read_batch(fresh)
                results = self.inbox.ingest_batch(batch, self._mark, connection, read, aside) if batch else []
            times = {w.incoming.row_id: w.times for w in again}
            self.set_aside = [SetAside(incoming, r, times.get(incoming.row_id, 0) + 1) for incoming, r in aside]
            self._wrote_none = bool(aside) and not results
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
