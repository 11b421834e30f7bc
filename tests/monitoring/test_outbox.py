"""The outbox table's API and its size budget, on a real SQLite file (and PostgreSQL)."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy

from app.local_inbox import outbox_store
from reflex_lookout.outbox import LOCAL, PENDING, OutboxBudget, OutboxStore
from tests.monitoring.helpers import row


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


def test_budget_counts_only_what_waits_not_what_the_inbox_keeps(engine: sqlalchemy.Engine) -> None:
    """Issue 13, item 10: rows read into the inbox (or rejected by it) are the inbox's, under its
    own budget (app/inbox/retention.py); the outbox cap is for rows waiting to be sent or read."""
    store = outbox_store(engine)  # Lookout's: unread local rows wait too (app/local_inbox.py)
    store.wal_bytes = lambda: 0  # envelope bytes only here (the test above counts the WAL)
    store.add_many([row(status=LOCAL, body=b"r" * 500), row(status="rejected", body=b"j" * 500),
                    row(status=LOCAL, body=b"u" * 30), row(status=PENDING, body=b"p" * 30)])
    with engine.begin() as connection:
        first = connection.execute(sqlalchemy.text("select min(id) from outbox")).scalar_one()
        connection.execute(sqlalchemy.text("insert into inbox_read (outbox_id, read_at) values (:id, 0)"), {"id": first})
    budget = OutboxBudget(store, max_bytes=100, refresh_s=0)
    assert asyncio.run(budget.has_room(40)) and not asyncio.run(budget.has_room(41))
