"""The durable outbox: envelopes are committed here before the tunnel answers 200.

`OutboxStore` is the table's synchronous API (one short transaction per call); `OutboxBudget` is
its cap. `OutboxWriter` (reflex_lookout/outbox_writer.py) batches concurrent inserts into one
transaction (group commit), so many browsers posting at once cost one commit, not one each.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import sqlalchemy
from sqlalchemy import Select, delete, func, insert, select, update
from sqlalchemy.pool import PoolProxiedConnection as DBAPIConnection

from reflex_lookout.tables import OUTBOX as TABLE

PENDING = "pending"  # to be forwarded to its DSN
# Statuses a destination other than forwarding gives rows (Lookout's embedded inbox, in the host app):
LOCAL = "local"  # kept for a reader in this process's database, not forwarded
REJECTED = "rejected"  # a local row the reader could not read, kept with the reason


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


# What a new row holds unless the tunnel says otherwise (the model's defaults).
_NEW_ROW = {"status": PENDING, "content_encoding": "", "categories": "", "event_id": None,
            "attempts": 0, "next_attempt_at": 0.0, "last_error": ""}


def new_row(dsn: str, status: str, body: bytes, categories: Sequence[str], event_id: str | None,
            content_encoding: str = "") -> dict[str, object]:
    """An outbox row for an envelope received now (the tunnel's and the server SDK's alike)."""
    return {
        "dsn": dsn, "status": status, "received_at": time.time(),
        "content_encoding": content_encoding if content_encoding.lower() not in ("", "identity") else "",
        "categories": ",".join(categories), "event_id": event_id, "size": len(body), "body": body,
    }


class StoreFailed(Exception):
    """The database refused or failed a write; nothing of it was stored."""


class OutboxStore:
    def __init__(self, engine: sqlalchemy.Engine, also_waiting: Select[Any] | None = None) -> None:
        """`also_waiting`: the bytes of rows that wait for a destination's own reader, beside the
        pending ones (a sum; Lookout's: local rows its inbox has not read yet)."""
        self.engine = engine
        self.also_waiting = also_waiting
        # The insert is compiled once and run through the driver directly: SQLAlchemy's execution
        # layer cost the writer thread half again as much time holding the GIL, which the
        # event loop serving the tunnel needs (bench/README.md).
        columns = [c.name for c in TABLE.columns if c.name != "id"]
        compiled = insert(TABLE).compile(dialect=engine.dialect, column_keys=columns)
        self._insert_sql = str(compiled)
        self._insert_keys = compiled.positiontup if compiled.positional else None
        self._dbapi_error = engine.dialect.loaded_dbapi.Error

    def add_many(self, rows: Sequence[dict[str, object]], connection: DBAPIConnection | None = None) -> None:
        """Insert `rows` in one transaction, on `connection` (a driver connection, as from
        `engine.raw_connection()`; the writer keeps one open) or a pooled one; `StoreFailed` if not."""
        try:
            full = [{**_NEW_ROW, **row} for row in rows]
            params = [tuple(r[k] for k in self._insert_keys) for r in full] if self._insert_keys else full
        except KeyError as exc:
            raise StoreFailed(f"an outbox row lacks {exc}") from None
        own = connection is None
        connection = connection or self.engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                cursor.executemany(self._insert_sql, params)
            finally:
                cursor.close()
            connection.commit()
        except self._dbapi_error as exc:
            with contextlib.suppress(self._dbapi_error):
                connection.rollback()
            raise StoreFailed(str(exc)) from exc
        finally:
            if own:
                connection.close()

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

    def set_status(self, row_ids: Sequence[int], status: str, error: str = "",
                   connection: sqlalchemy.Connection | None = None) -> None:
        """Set the rows' status, in `connection`'s transaction when given (else in one of its own)."""
        if not row_ids:
            return
        change = update(TABLE).where(TABLE.c.id.in_(list(row_ids))).values(status=status, last_error=error[:500])
        if connection is not None:
            connection.execute(change)
            return
        with self.engine.begin() as own:
            own.execute(change)

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

    def waiting_bytes(self) -> int:
        """The bytes of rows still waiting: to be forwarded (pending), or `also_waiting`. Rows a
        destination's reader has read or rejected are its own, under its own budget."""
        with self.engine.connect() as connection:
            waiting = int(connection.execute(_PENDING_BYTES).scalar_one())
            if self.also_waiting is not None:
                waiting += int(connection.execute(self.also_waiting).scalar_one())
            return waiting

    def wal_bytes(self) -> int:
        """The size of SQLite's write-ahead log file (0 for other databases)."""
        database = self.engine.url.database if self.engine.dialect.name == "sqlite" else None
        if not database or database == ":memory:":
            return 0
        try:
            return os.path.getsize(f"{database}-wal")
        except OSError:
            return 0


_PENDING_BYTES = select(func.coalesce(func.sum(TABLE.c.size), 0)).where(TABLE.c.status == PENDING)


class OutboxBudget:
    """Backpressure: is there room for `size` more bytes under the outbox cap? The cap counts the rows
    still waiting (`OutboxStore.waiting_bytes`), never what the inbox keeps.

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
        if self._stale():
            self._used = await anyio.to_thread.run_sync(self._disk_bytes)
        return self._used + size <= self.max_bytes

    def has_room_blocking(self, size: int) -> bool:
        """`has_room` for a thread that may wait on the database (the server SDK's transport)."""
        if self._stale():
            self._used = self._disk_bytes()
        return self._used + size <= self.max_bytes

    def _stale(self) -> bool:
        now = time.monotonic()
        if now - self._read_at <= self.refresh_s:
            return False
        self._read_at = now
        return True

    def _disk_bytes(self) -> int:
        # The WAL counts too: it grows while the writer never pauses (see `_Checkpointer`).
        return self.store.waiting_bytes() + self.store.wal_bytes()

    def took(self, size: int) -> None:
        self._used += size
