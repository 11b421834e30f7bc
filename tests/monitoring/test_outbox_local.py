"""The outbox's size budget under Lookout's store (app/local_inbox.py), on a real SQLite file (and
PostgreSQL); the outbox's own tests are the plugin's (plugin/tests/test_outbox.py)."""

from __future__ import annotations

import asyncio

import sqlalchemy

from app.local_inbox import outbox_store
from plugin_support.helpers import row
from reflex_lookout.outbox import LOCAL, PENDING, OutboxBudget


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
