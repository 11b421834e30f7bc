"""The inbox's byte budget on a real inbox: what it keeps is measured, and past the budget the
oldest of each kind gives way, then whole issues, least seen first, until it fits."""

from __future__ import annotations

import json
import time
import uuid

from app.inbox.budget import InboxBudget
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from reflex_lookout.outbox import OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import big_error, feed, held_bytes, local_rows, query, titles


def test_a_budget_is_kept_even_when_every_issue_has_one_huge_event(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    now = time.time()
    for n in range(10):
        feed(outbox, inbox, [big_error(f"flood {n}")], now + n)
    assert held_bytes(inbox) > 300_000
    evicted = InboxBudget(inbox.engine, 100_000).enforce()
    assert held_bytes(inbox) <= 100_000 and evicted["issues"] == 10 - len(titles(inbox))
    kept = titles(inbox)
    assert kept and all(f"'flood {n}'" in title for title, n in zip(kept, range(10 - len(kept), 10), strict=True))  # the newest
    assert query(inbox, "select count(*) from inbox_event") == [(len(kept),)]
    assert query(inbox, "select count(*) from inbox_read") == query(inbox, "select count(*) from outbox")


def test_under_the_budget_the_least_seen_issues_go_first(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    now = time.time()
    feed(outbox, inbox, [big_error("seen often", 20_000) for _ in range(2)], now)  # the oldest, seen twice
    for n in range(4):
        feed(outbox, inbox, [big_error(f"seen once {n}", 20_000)], now + 10 + n)
    InboxBudget(inbox.engine, 70_000).enforce()
    kept = titles(inbox)
    assert any("seen often" in title for title in kept)
    assert not any("seen once 0" in title for title in kept)
    assert held_bytes(inbox) <= 70_000


def test_logs_transactions_rejected_and_raw_envelopes_count_against_the_budget(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    now = time.time()
    line = "l" * 5_000
    local_rows(outbox, [build(LOCAL_DSN, [
        ("log", json.dumps({"items": [{"timestamp": now, "level": "info", "body": f"{n} {line}"}]}).encode()),
        ("transaction", json.dumps({"event_id": uuid.uuid4().hex, "transaction": f"/t{n}", "start_timestamp": now,
                                    "timestamp": now, "extra": {"blob": line}}).encode()),
    ]) for n in range(20)], now)
    local_rows(outbox, [build(LOCAL_DSN, [("event", b"[1, 2]")])] * 5, now)  # rejected by the feeder
    while InboxFeeder(outbox, inbox).feed_once():
        pass
    assert query(inbox, "select count(*) from outbox where status = 'rejected'") == [(5,)]
    InboxBudget(inbox.engine, 60_000).enforce()
    [(logs,)] = query(inbox, "select coalesce(sum(length(body) + length(attributes)), 0) from inbox_log")
    [(transactions,)] = query(inbox, "select coalesce(sum(length(payload)), 0) from inbox_transaction")
    assert held_bytes(inbox) + logs + transactions <= 60_000
    # The newest of each kind stayed: the budget takes the oldest first.
    assert query(inbox, "select body from inbox_log order by id desc limit 1")[0][0].startswith("19 ")
    assert query(inbox, "select name from inbox_transaction order by id desc limit 1") == [("/t19",)]


def test_what_is_kept_is_measured_per_kind_and_nothing_goes_under_the_budget(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    now = time.time()
    feed(outbox, inbox, [big_error("measured", 10_000)], now)
    local_rows(outbox, [build(LOCAL_DSN, [("client_report", b'{"discarded_events": []}')])], now)
    InboxFeeder(outbox, inbox).feed_once()
    kept = held_bytes(inbox)
    local_rows(outbox, [build(LOCAL_DSN, [("event", b"{}")])], now)  # waiting: the outbox's, not the inbox's
    budget = InboxBudget(inbox.engine, 10**9)
    sizes = budget.measure()
    [(event_row,)] = query(inbox, "select size from outbox where id = (select envelope_id from inbox_event)")
    assert sizes["events"] == event_row > 10_000 and sizes["raw_envelopes"] == kept - event_row > 0
    assert sizes["rejected"] == sizes["transactions"] == sizes["logs"] == sizes["feedback"] == 0
    assert set(budget.enforce().values()) == {0}
