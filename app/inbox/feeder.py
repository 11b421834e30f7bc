"""Local mode: envelopes the tunnel and the server SDK committed to the outbox as "local" rows are
read into the inbox, oldest first, as soon as they are committed (or within a second); every
minute, retention (app/inbox/retention.py) keeps the inbox under its caps.

A row read is marked "inboxed" (its raw envelope stays: the item types the inbox does not read
yet live only there); a row that cannot be read (an unknown project, a broken event) is marked
"rejected" with the reason, so it is never retried in a loop and nothing is silently lost.
"""

from __future__ import annotations

import asyncio
import logging
import time

import anyio.to_thread

from app.inbox.retention import Retention
from app.inbox.store import InboxStore, UnknownProject
from app.monitoring import encodings, envelope
from app.monitoring.outbox import INBOXED, OutboxStore

logger = logging.getLogger(__name__)
REJECTED = "rejected"
BATCH = 200


class InboxFeeder:
    def __init__(self, outbox: OutboxStore, inbox: InboxStore, idle_s: float = 1.0,
                 retention: Retention | None = None, retention_every_s: float = 60.0) -> None:
        self.outbox = outbox
        self.inbox = inbox
        self.idle_s = idle_s
        self.retention = retention
        self.retention_every_s = retention_every_s
        self._retained_at = float("-inf")
        self.ingested = 0
        self.rejected = 0
        self._wake = asyncio.Event()

    def wake(self, dsn: str | None = None) -> None:
        self._wake.set()

    async def run(self) -> None:
        while True:
            self._wake.clear()
            if self.retention is not None and time.monotonic() - self._retained_at > self.retention_every_s:
                self._retained_at = time.monotonic()
                evicted = await anyio.to_thread.run_sync(self.retention.run)
                logger.info("inbox retention: %s", evicted)
            if await anyio.to_thread.run_sync(self.feed_once) < BATCH:
                try:
                    await asyncio.wait_for(self._wake.wait(), self.idle_s)
                except TimeoutError:
                    pass

    def feed_once(self) -> int:
        """Read one batch of local rows into the inbox; how many rows there were."""
        rows = self.outbox.local_rows(BATCH)
        done: list[int] = []
        for row_id, dsn, body, encoding, received_at in rows:
            try:
                self.inbox.ingest_envelope(body, encoding, received_at, dsn=dsn)
            except (UnknownProject, envelope.EnvelopeError, encodings.DecodeError, ValueError) as exc:
                logger.warning("outbox row %d was not read into the inbox: %s", row_id, exc)
                self.outbox.set_status([row_id], REJECTED, str(exc))
                self.rejected += 1
                continue
            done.append(row_id)
        self.outbox.set_status(done, INBOXED)
        self.ingested += len(done)
        return len(rows)
