"""Local mode: outbox rows (as the tunnel and the server SDK commit them) read into the inbox."""

from __future__ import annotations

import time

import pytest

import sqlalchemy

from app.inbox.feeder import REJECTED, InboxFeeder
from app.inbox.store import InboxStore
from app.monitoring.outbox import INBOXED, LOCAL, OutboxStore
from tests.inbox.conftest import LOCAL_DSN
from tests.inbox.test_store import error, event_envelope, query


def local_row(body: bytes, dsn: str = LOCAL_DSN) -> dict[str, object]:
    return {"dsn": dsn, "status": LOCAL, "received_at": time.time(), "size": len(body), "body": body}


def statuses(engine: sqlalchemy.Engine) -> list[tuple]:
    with engine.connect() as connection:
        return [tuple(r) for r in connection.execute(sqlalchemy.text("select status, last_error from outbox order by id"))]


def test_local_rows_become_issues_and_stay_as_raw_copies(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error("'user'"))), local_row(event_envelope(error("'user'"), dsn=None))])
    feeder = InboxFeeder(outbox, inbox)
    assert feeder.feed_once() == 2 and feeder.feed_once() == 0
    assert statuses(engine) == [(INBOXED, ""), (INBOXED, "")]
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
    assert good == (INBOXED, "") and (feeder.ingested, feeder.rejected) == (1, 2)


@pytest.mark.anyio
async def test_the_running_feeder_reads_rows_and_applies_retention(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    import asyncio

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
