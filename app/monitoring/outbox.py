"""The durable outbox: envelopes are committed here before the tunnel answers 200.

`OutboxStore` is the table's synchronous API (one short transaction per call). `OutboxWriter`
batches concurrent inserts into one transaction (group commit) and runs it off the event loop,
so many browsers posting at once cost one fsync, not one each.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

import anyio.to_thread
import sqlalchemy
from sqlalchemy import delete, func, insert, select, update

from app.models import OutboxEnvelope

TABLE = OutboxEnvelope.__table__
PENDING = "pending"
LOCAL = "local"


@dataclass(frozen=True)
class Delivery:
    """One row on its way to upstream."""

    id: int
    dsn: str
    body: bytes
    content_encoding: str
    categories: tuple[str, ...]
    attempts: int
    next_attempt_at: float


_DELIVERY_COLUMNS = (
    TABLE.c.id, TABLE.c.dsn, TABLE.c.body, TABLE.c.content_encoding, TABLE.c.categories,
    TABLE.c.attempts, TABLE.c.next_attempt_at,
)


class OutboxStore:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def add_many(self, rows: Sequence[dict[str, object]]) -> None:
        with self.engine.begin() as connection:
            connection.execute(insert(TABLE), list(rows))

    def pending_dsns(self) -> list[str]:
        query = select(TABLE.c.dsn).where(TABLE.c.status == PENDING).distinct()
        with self.engine.connect() as connection:
            return list(connection.execute(query).scalars())

    def next_rows(self, dsn: str, limit: int) -> list[Delivery]:
        """The oldest pending rows of `dsn`, in receipt order (which is delivery order)."""
        query = (
            select(*_DELIVERY_COLUMNS)
            .where(TABLE.c.status == PENDING, TABLE.c.dsn == dsn)
            .order_by(TABLE.c.id)
            .limit(limit)
        )
        with self.engine.connect() as connection:
            return [
                Delivery(id, dsn, body, encoding, tuple(c for c in categories.split(",") if c), attempts, due)
                for id, dsn, body, encoding, categories, attempts, due in connection.execute(query)
            ]

    def remove(self, row_ids: Sequence[int]) -> None:
        if row_ids:
            with self.engine.begin() as connection:
                connection.execute(delete(TABLE).where(TABLE.c.id.in_(list(row_ids))))

    def defer(self, row_id: int, next_attempt_at: float, error: str) -> None:
        with self.engine.begin() as connection:
            connection.execute(
                update(TABLE)
                .where(TABLE.c.id == row_id)
                .values(attempts=TABLE.c.attempts + 1, next_attempt_at=next_attempt_at, last_error=error[:500])
            )

    def depth(self) -> dict[str, dict[str, int]]:
        """{status: {"envelopes": n, "bytes": b}}."""
        query = select(TABLE.c.status, func.count(), func.coalesce(func.sum(TABLE.c.size), 0)).group_by(
            TABLE.c.status
        )
        with self.engine.connect() as connection:
            return {status: {"envelopes": n, "bytes": int(b)} for status, n, b in connection.execute(query)}

    def total_bytes(self) -> int:
        return sum(d["bytes"] for d in self.depth().values())


class OutboxWriter:
    """Group commit: `await submit(row)` returns once the row is committed (or raises why not)."""

    def __init__(self, store: OutboxStore, max_batch: int = 512) -> None:
        self.store = store
        self.max_batch = max_batch
        self._queue: asyncio.Queue[tuple[dict[str, object], asyncio.Future[None]]] | None = None
        self._task: asyncio.Task[None] | None = None

    async def submit(self, row: dict[str, object]) -> None:
        # Queue and task belong to the running loop: a new loop (a restarted server, a test) gets
        # its own instead of an error about a queue bound to a different event loop.
        loop = asyncio.get_running_loop()
        if self._queue is None or self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._queue = asyncio.Queue()
            self._task = loop.create_task(self._run(self._queue), name="lookout-outbox-writer")
        done: asyncio.Future[None] = loop.create_future()
        await self._queue.put((row, done))
        await done

    async def _run(self, queue: asyncio.Queue[tuple[dict[str, object], asyncio.Future[None]]]) -> None:
        while True:
            batch = [await queue.get()]
            while len(batch) < self.max_batch and not queue.empty():
                batch.append(queue.get_nowait())
            try:
                await anyio.to_thread.run_sync(self.store.add_many, [row for row, _ in batch])
            except Exception as exc:  # every waiter learns the batch failed; nothing is half-stored
                for _, done in batch:
                    if not done.done():
                        done.set_exception(exc)
            else:
                for _, done in batch:
                    if not done.done():
                        done.set_result(None)

    async def close(self) -> None:
        if self._task is not None and self._task.get_loop() is asyncio.get_running_loop():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


class OutboxBudget:
    """Backpressure: is there room for `size` more bytes under the outbox cap?

    Summing the table on every request would cost more than the insert, so the used size is
    re-read at most every `refresh_s` and what was accepted since is added on top.
    """

    def __init__(self, store: OutboxStore, max_bytes: int, refresh_s: float = 1.0) -> None:
        self.store = store
        self.max_bytes = max_bytes
        self.refresh_s = refresh_s
        self._used = 0
        self._read_at = float("-inf")

    async def has_room(self, size: int) -> bool:
        loop = asyncio.get_running_loop()
        if loop.time() - self._read_at > self.refresh_s:
            self._read_at = loop.time()
            self._used = await anyio.to_thread.run_sync(self.store.total_bytes)
        return self._used + size <= self.max_bytes

    def took(self, size: int) -> None:
        self._used += size
