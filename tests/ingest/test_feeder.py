"""Local mode: outbox rows (as the tunnel and the server SDK commit them) read into the inbox."""

from __future__ import annotations

import asyncio
import dataclasses

import httpx
import pytest
import sqlalchemy

from app.ingest.feeder import REJECTED, InboxFeeder
from app.ingest.store import InboxStore
from app.settings import Settings
from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import LOCAL, OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel
from tests.environment import LOCAL_DSN
from tests.factories import READ, error, event_envelope, local_row, query, statuses

# A trigger that refuses events whose title has "poison" in it, as a constraint would.
REFUSING_TRIGGER = {
    "sqlite": ["create trigger refuse before insert on inbox_event when new.title like '%poison%' "
               "begin select raise(abort, 'refused by a test trigger'); end"],
    "postgresql": [
        "create function refuse() returns trigger language plpgsql as $$ begin "
        "if new.title like '%%poison%%' then raise exception 'refused by a test trigger' using errcode = '23514'; "
        "end if; return new; end $$",
        "create trigger refuse before insert on inbox_event for each row execute function refuse()",
    ],
}


def test_local_rows_become_issues_and_stay_as_raw_copies(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error("'user'"))), local_row(event_envelope(error("'user'"), dsn=None))])
    feeder = InboxFeeder(outbox, inbox)
    assert feeder.feed_once() == 2 and feeder.feed_once() == 0
    assert statuses(engine) == [(READ, ""), (READ, "")]
    assert query(inbox, "select title, event_count from inbox_issue") == [("KeyError: 'user'", 2)]


def test_a_row_that_cannot_be_read_is_set_aside_with_the_reason(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([
        local_row(b"not an envelope\n"),
        local_row(event_envelope(error("x"), dsn="http://stranger@localhost/9"), dsn="http://stranger@localhost/9"),
        local_row(event_envelope(error("kept"))),
    ])
    feeder = InboxFeeder(outbox, inbox)
    feeder.feed_once()
    [bad, stranger, good] = statuses(engine)
    assert bad[0] == REJECTED and bad[1]
    assert stranger == (REJECTED, "No project of this inbox has the DSN http://stranger@localhost/9.")
    assert good == (READ, "") and (feeder.ingested, feeder.rejected) == (1, 2)


@pytest.mark.anyio
async def test_the_running_feeder_reads_rows_and_applies_retention(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    from app.inbox.retention import Caps, Retention

    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error("'same'"))) for _ in range(5)])
    feeder = InboxFeeder(outbox, inbox, idle_s=0.05, retention=Retention(engine, Caps(events=3)), retention_every_s=0.1)
    task = asyncio.create_task(feeder.run())
    try:
        for _ in range(100):
            await asyncio.sleep(0.05)
            if feeder.ingested == 5 and query(inbox, "select count(*) from inbox_event") == [(3,)]:
                break
    finally:
        task.cancel()
    assert feeder.ingested == 5
    assert query(inbox, "select count(*) from inbox_event") == [(3,)]  # cut to the cap on a later pass


@pytest.mark.anyio
async def test_the_running_feeder_tells_of_each_batch_it_committed(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    """`on_fed` (the alert sender's wake) comes after a batch is committed, not on an empty turn."""
    outbox = OutboxStore(engine)
    fed: list[int] = []
    feeder = InboxFeeder(outbox, inbox, idle_s=0.05, on_fed=lambda: fed.append(feeder.ingested))
    task = asyncio.create_task(feeder.run())
    try:
        await asyncio.sleep(0.3)  # empty turns
        outbox.add_many([local_row(event_envelope(error("'user'")))])
        for _ in range(100):
            await asyncio.sleep(0.05)
            if fed:
                break
    finally:
        task.cancel()
    assert fed == [1]  # once, when the row was in


def test_a_row_the_database_refuses_does_not_sink_its_batch(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    with engine.begin() as connection:  # a real refusal from the database, for one title only
        for statement in REFUSING_TRIGGER[engine.dialect.name]:
            connection.exec_driver_sql(statement)
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error(name))) for name in ("'a'", "'poison'", "'b'")])
    feeder = InboxFeeder(outbox, inbox)
    assert feeder.feed_once() == 3
    [a, poison, b] = statuses(engine)
    assert a == b == (READ, "")
    assert poison[0] == REJECTED and "refused by a test trigger" in poison[1]
    assert query(inbox, "select title from inbox_issue order by id") == [("KeyError: 'a'",), ("KeyError: 'b'",)]


@pytest.mark.anyio
async def test_the_feeder_outlives_a_database_failure_and_loses_nothing(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    outbox = OutboxStore(engine)
    with engine.begin() as connection:  # the table is gone for a while: every batch fails
        connection.execute(sqlalchemy.text("alter table inbox_event rename to inbox_event_away"))
    outbox.add_many([local_row(event_envelope(error(f"'{n}'"))) for n in range(3)])
    feeder = InboxFeeder(outbox, inbox, idle_s=0.05)
    task = asyncio.create_task(feeder.run())
    try:
        for _ in range(100):
            await asyncio.sleep(0.02)
            if feeder.failures >= 2:
                break
        assert feeder.failures >= 2 and feeder.ingested == 0
        assert {s for s, _ in statuses(engine)} == {LOCAL}  # still waiting, none rejected
        with engine.begin() as connection:
            connection.execute(sqlalchemy.text("alter table inbox_event_away rename to inbox_event"))
        for _ in range(100):
            await asyncio.sleep(0.02)
            if feeder.ingested == 3:
                break
    finally:
        task.cancel()
    assert feeder.ingested == 3 and feeder.rejected == 0
    assert query(inbox, "select count(*) from inbox_event") == [(3,)]


def test_an_event_is_stored_once_in_its_envelope_even_compressed(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    import gzip

    from app.inbox.reading import InboxReader

    event = error("'zipped'")
    body = gzip.compress(event_envelope(event))
    OutboxStore(engine).add_many([{**local_row(body), "content_encoding": "gzip"}])
    assert InboxFeeder(OutboxStore(engine), inbox).feed_once() == 1
    assert query(inbox, "select payload, envelope_id, item_index from inbox_event") == [("", 1, 0)]
    assert InboxReader(engine).event(event["event_id"])["event"] == event
    assert InboxReader(engine).latest_event(1) == event


# An event nested 200,000 deep: 400 KB, under the 1 MiB item cap (and < 1 KB gzipped). Python's JSON
# decoder raised RecursionError on it, which killed the feeder on this row at every restart.
DEEP_EVENT = b'{"exception": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"


async def until(condition, timeout: float = 10) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def test_a_poison_row_is_rejected_with_the_reason_and_the_next_one_is_read(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(build(LOCAL_DSN, [("event", DEEP_EVENT)])), local_row(event_envelope(error("'after'")))])
    feeder = InboxFeeder(outbox, inbox)
    assert feeder.feed_once() == 2
    [poison, after] = statuses(engine)
    assert poison == (REJECTED, "The JSON is nested more than 128 levels deep.")
    assert after == (READ, "") and query(inbox, "select title from inbox_issue") == [("KeyError: 'after'",)]


@pytest.mark.parametrize("number", [b"Infinity", b"-Infinity", b"NaN", b"1e999"])
def test_a_row_with_a_number_json_has_not_is_rejected(inbox: InboxStore, engine: sqlalchemy.Engine, number: bytes) -> None:
    logs = b'{"items": [{"timestamp": %s, "level": "info", "body": "x"}]}' % number
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(build(LOCAL_DSN, [("log", logs)])),
                     local_row(build(LOCAL_DSN, [("log", logs.replace(number, b"1.5"))]))])
    InboxFeeder(outbox, inbox).feed_once()
    [bad, good] = statuses(engine)
    assert bad[0] == REJECTED and ("is not a JSON value" in bad[1] or "too large for a number" in bad[1])
    assert good == (READ, "") and query(inbox, "select timestamp from inbox_log") == [(1.5,)]


@pytest.mark.anyio
async def test_the_running_feeder_rejects_a_poison_row_and_keeps_reading(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    outbox = OutboxStore(engine)
    feeder = InboxFeeder(outbox, inbox, idle_s=0.05)
    settings = dataclasses.replace(Settings.from_env({}), local_dsn=Dsn.parse(LOCAL_DSN))
    tunnel = Tunnel(settings, outbox, RateLimits(), TunnelStats(), on_commit=feeder.wake)
    task = asyncio.create_task(feeder.run())
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=tunnel.asgi()), base_url="http://lookout.test") as client:
            for body in (build(LOCAL_DSN, [("event", DEEP_EVENT)]), event_envelope(error("'after'"))):
                assert (await client.post(settings.tunnel_path, content=body)).status_code == 200
            await until(lambda: (feeder.rejected, feeder.ingested) == (1, 1))
            assert not task.done()
            assert (await client.post(settings.tunnel_path, content=event_envelope(error("'later'")))).status_code == 200
            await until(lambda: feeder.ingested == 2)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await tunnel.writer.close()
    assert [s for s, _ in statuses(engine)] == [REJECTED, READ, READ]


class FailingOnce(InboxStore):
    """An inbox whose first batch fails with an error nobody expects (a test seam, not a mock)."""

    failed = False

    def ingest_batch(self, batch, then=None, *args):
        if not self.failed:
            self.failed = True
            raise RuntimeError("something nobody expected")
        return super().ingest_batch(batch, then, *args)


@pytest.mark.anyio
async def test_the_feeder_logs_an_unexpected_error_and_goes_on(inbox: InboxStore, engine: sqlalchemy.Engine, caplog) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error("'x'")))])
    feeder = InboxFeeder(outbox, FailingOnce(engine), idle_s=0.05)
    task = asyncio.create_task(feeder.run())
    try:
        await until(lambda: feeder.ingested == 1)
        assert not task.done() and feeder.failures == 1
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert "something nobody expected" in caplog.text and statuses(engine) == [(READ, "")]


def test_text_no_database_can_store_is_replaced_and_the_event_kept(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    # PostgreSQL refuses NUL in text: the batch failed as if the database were away, and was tried
    # again for ever (nothing after it was read); a lone surrogate has no UTF-8 at all.
    event = {**error("'a\u0000b'", kind="Key\ud800Error"), "release": "r\u0000"}
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(event)), local_row(event_envelope(error("'after'")))])
    assert InboxFeeder(outbox, inbox).feed_once() == 2
    assert statuses(engine) == [(READ, ""), (READ, "")]
    assert query(inbox, "select title from inbox_issue order by id") == [("Key\ufffdError: 'a\ufffdb'",), ("KeyError: 'after'",)]
    assert query(inbox, "select release from inbox_event order by id") == [("r\ufffd",), ("",)]
