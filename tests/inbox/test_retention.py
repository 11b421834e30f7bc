"""Retention on a real inbox: biggest issues give up their oldest events first, every issue
keeps its first and latest event, and transactions, logs and raw envelopes stay under their caps."""

from __future__ import annotations

import json
import time
import uuid

from app.inbox.reading import InboxReader
from app.inbox.retention import DAY, Caps, Retention
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol import envelope
from tests.environment import LOCAL_DSN
from tests.factories import big_error, error, event_envelope, held_bytes, local_rows, query, titles


def add(inbox: InboxStore, value: str, count: int, at: float = 1000.0) -> list[str]:
    ids = []
    for n in range(count):
        event = error(value)
        inbox.ingest_envelope(event_envelope(event), received_at=at + n)
        ids.append(event["event_id"])
    return ids


def kept(inbox: InboxStore, ids: list[str]) -> list[str]:
    stored = {row[0] for row in query(inbox, "select event_id from inbox_event")}
    return [i for i in ids if i in stored]


def test_the_biggest_issue_gives_up_its_oldest_events_but_keeps_first_and_latest(inbox: InboxStore) -> None:
    flood, rare = add(inbox, "'flood'", 8), add(inbox, "'rare'", 2)
    evicted = Retention(inbox.engine, Caps(events=5)).run(now=2000.0)
    assert evicted.events == 5
    assert kept(inbox, flood) == [flood[0], flood[6], flood[7]]  # first, then the newest
    assert kept(inbox, rare) == rare
    assert query(inbox, "select event_count from inbox_issue order by id") == [(8,), (2,)]  # what happened


def test_two_big_issues_shrink_together(inbox: InboxStore) -> None:
    first, second = add(inbox, "'a'", 6), add(inbox, "'b'", 6)
    Retention(inbox.engine, Caps(events=8)).run(now=2000.0)
    assert (len(kept(inbox, first)), len(kept(inbox, second))) == (4, 4)


def test_old_events_go_except_each_issues_first_and_latest(inbox: InboxStore) -> None:
    old = add(inbox, "'old'", 4, at=1000.0)
    Retention(inbox.engine, Caps(max_age_days=1)).run(now=1000.0 + 2 * DAY)
    assert kept(inbox, old) == [old[0], old[3]]


def test_transactions_logs_and_raw_envelopes_keep_the_newest(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    now = time.time()
    local_rows(outbox, [build(LOCAL_DSN, [
        ("transaction", json.dumps({"event_id": uuid.uuid4().hex, "transaction": f"/t{n}", "start_timestamp": now,
                                    "timestamp": now, "contexts": {"trace": {"trace_id": "a" * 32}}}).encode()),
        ("log", json.dumps({"items": [{"timestamp": now + n, "level": "info", "body": f"line {n}"}]}).encode()),
    ]) for n in range(5)], now)
    assert InboxFeeder(outbox, inbox).feed_once() == 5
    evicted = Retention(inbox.engine, Caps(transactions=2, logs=3, raw_envelopes=1)).run()
    assert (evicted.transactions, evicted.logs, evicted.raw_envelopes) == (3, 2, 4)
    assert query(inbox, "select name from inbox_transaction order by id") == [("/t3",), ("/t4",)]
    assert query(inbox, "select body from inbox_log order by id") == [("line 2",), ("line 3",), ("line 4",)]
    assert query(inbox, "select count(*) from outbox") == query(inbox, "select count(*) from inbox_read") == [(1,)]


def test_an_envelope_stays_while_a_kept_event_is_stored_in_it(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    now = time.time()
    same = [error("'same'") for _ in range(4)]
    local_rows(outbox, [event_envelope(event) for event in [*same, error("'other'")]], now)
    local_rows(outbox, [build(LOCAL_DSN, [("client_report", b'{"discarded_events": []}')])], now)
    assert InboxFeeder(outbox, inbox).feed_once() == 6
    local_rows(outbox, [event_envelope(error("'unread'"))], now)  # the feeder has not read it: never retention's
    evicted = Retention(inbox.engine, Caps(events=3, raw_envelopes=0)).run()
    # 'same' gives up its two middle events (it keeps its first and latest), and their envelopes
    # go with them, as does the read envelope with no event; the other envelopes stay.
    assert (evicted.events, evicted.raw_envelopes) == (2, 3)
    reader = InboxReader(inbox.engine)
    assert [reader.event(e["event_id"]) is not None for e in same] == [True, False, False, True]
    assert reader.event(same[3]["event_id"])["event"] == same[3]  # read back from its envelope, as sent
    assert query(inbox, "select count(*) from outbox") == [(4,)]  # 3 events' envelopes and the unread one


# Issue 13, item 10: the inbox has a byte budget and an issue cap, and cannot fill the outbox ------


def test_past_the_issue_cap_the_oldest_least_seen_issues_go_with_their_events(inbox: InboxStore) -> None:
    add(inbox, "'often'", 3, at=1000.0)
    for n, name in enumerate("abcd"):  # letters: digits would be grouped as one value
        add(inbox, f"'once {name}'", 1, at=2000.0 + n)
    evicted = Retention(inbox.engine, Caps(issues=3)).run(now=3000.0)
    assert evicted.issues == 2
    assert titles(inbox) == ["KeyError: 'often'", "KeyError: 'once c'", "KeyError: 'once d'"]
    assert query(inbox, "select count(*) from inbox_event") == [(5,)]


def test_a_flood_of_big_unique_errors_cannot_stop_later_reports(inbox: InboxStore) -> None:
    """The issue's 26 POSTs of 20 MiB, scaled down: 26 envelopes of ~50 KB against a 300 KB outbox
    cap, each read into the inbox by the feeder; then retention, then a real report."""
    import asyncio
    import dataclasses

    from app.settings import Settings
    from reflex_lookout.protocol.asgi import Refused
    from reflex_lookout.protocol.ratelimits import RateLimits
    from reflex_lookout.stats import TunnelStats
    from reflex_lookout.tunnel import Tunnel

    settings = dataclasses.replace(Settings.from_env({}), outbox_max_bytes=300_000)
    outbox = OutboxStore(inbox.engine)
    outbox.wal_bytes = lambda: 0  # envelope bytes only (test_outbox counts the WAL)
    feeder = InboxFeeder(outbox, inbox)

    async def post(tunnel: Tunnel, event: dict) -> int:
        tunnel.budget.refresh_s = 0  # read the outbox's size on every request
        try:
            raw = event_envelope(event)
            await tunnel.commit(LOCAL_DSN, "", envelope.parse(raw, len(raw)), raw)
        except Refused as refused:
            return refused.status
        return 200

    async def posting(events: list[dict]) -> list[int]:
        tunnel = Tunnel(settings, outbox, RateLimits(), TunnelStats())
        statuses = []
        try:
            for event in events:
                statuses.append(await post(tunnel, event))
                while feeder.feed_once():
                    pass
        finally:
            await tunnel.writer.close()
        return statuses

    assert asyncio.run(posting([big_error(f"flood {n}", 50_000) for n in range(26)])) == [200] * 26
    retention = Retention(inbox.engine, Caps(max_bytes=400_000))
    retention.run()
    assert held_bytes(inbox) <= 400_000
    real = error("'a real report'")
    assert asyncio.run(posting([real])) == [200]
    retention.run()
    assert InboxReader(inbox.engine).event(real["event_id"])["event"] == real
    assert held_bytes(inbox) <= 400_000
