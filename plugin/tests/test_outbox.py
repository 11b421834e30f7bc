"""The outbox table's API and its size budget, on a real SQLite file (and PostgreSQL)."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy

from plugin_support.helpers import row
from reflex_lookout.outbox import LOCAL, PENDING, OutboxBudget, OutboxStore


def test_rows_come_back_per_dsn_in_receipt_order(engine: sqlalchemy.Engine) -> None:
    store = OutboxStore(engine)
    store.add_many([row("d1", body=b"1"), row("d2", body=b"2"), row("d1", body=b"3"), row("d1", LOCAL, b"4")])
    assert sorted(store.pending_dsns()) == ["d1", "d2"]
    assert [r.body for r in store.next_rows("d1", 10)] == [b"1", b"3"]  # local rows are not forwarded
    first = store.next_rows("d1", 1)[0]
    store.defer(first.id, 123.0, "boom")
    again = store.next_rows("d1", 1)[0]
    assert (again.id, again.attempts, again.next_attempt_at) == (first.id, 1, 123.0)
    store.remove([first.id])
    assert [r.body for r in store.next_rows("d1", 10)] == [b"3"]
    assert store.depth() == {PENDING: {"envelopes": 2, "bytes": 2}, LOCAL: {"envelopes": 1, "bytes": 1}}
    assert store.total_bytes() == 3


def test_budget_counts_what_was_taken_since_it_last_read(engine: sqlalchemy.Engine) -> None:
    store = OutboxStore(engine)
    store.add_many([row(body=b"x" * 60)])
    budget = OutboxBudget(store, max_bytes=100 + store.wal_bytes(), refresh_s=3600)

    async def main() -> tuple[bool, bool, bool]:
        fits = await budget.has_room(40)
        budget.took(40)
        return fits, await budget.has_room(1), await budget.has_room(0)

    assert asyncio.run(main()) == (True, False, True)


def test_budget_counts_the_write_ahead_log(engine: sqlalchemy.Engine) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("SQLite's write-ahead log file (PostgreSQL's WAL is the server's own)")
    store = OutboxStore(engine)
    store.add_many([row(body=b"x" * 60)])
    wal = store.wal_bytes()
    assert wal > 4096  # the file is in WAL mode and the insert went through the log
    budget = OutboxBudget(store, max_bytes=60 + wal)
    assert asyncio.run(budget.has_room(0)) and not asyncio.run(budget.has_room(1))
