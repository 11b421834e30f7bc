"""Several feeders on one PostgreSQL (issue 37): each claims the rows it stores, skipping those another
holds, and writes an issue only while no other feeder does (app/ingest/feeder.py, store.py `Keys`).

A feeder here is paused inside its transaction (its rows claimed and written, not committed) while
another works; that other one's connections give up on a lock after 5 s (`lock_timeout`) rather
than wait for the paused one, which would wait for it in turn."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence

import pytest
import sqlalchemy

from app.inbox.retention import Evicted
from app.ingest.feeder import InboxFeeder
from app.ingest.incoming import Incoming, Ingested
from app.ingest.store import InboxStore
from reflex_lookout.background import Lease
from reflex_lookout.outbox import OutboxStore
from tests.factories import error, event_envelope, local_row, query

pytestmark = pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)


class Paused(InboxFeeder):
    """A feeder whose batch, written, waits for `go` before its transaction commits."""

    def __init__(self, outbox: OutboxStore, inbox: InboxStore, batch: int) -> None:
        super().__init__(outbox, inbox, batch=batch)
        self.inside, self.go = threading.Event(), threading.Event()

    def _mark(self, connection: sqlalchemy.Connection, batch: Sequence[Incoming],
              results: list[Ingested | Exception]) -> None:
        super()._mark(connection, batch, results)
        self.inside.set()
        assert self.go.wait(60)


@pytest.fixture
def paused(request: pytest.FixtureRequest) -> Iterator[list[tuple[Paused, threading.Thread]]]:
    """Paused feeders started in threads (`start`), let go and joined at the end."""
    started: list[tuple[Paused, threading.Thread]] = []
    yield started
    for feeder, thread in started:
        feeder.go.set()
        thread.join(30)


def start(started: list[tuple[Paused, threading.Thread]], feeder: Paused) -> Paused:
    thread = threading.Thread(target=feeder.feed_once)
    thread.start()
    started.append((feeder, thread))
    assert feeder.inside.wait(30)
    return feeder


@pytest.fixture
def impatient(database_url: str) -> Iterator[sqlalchemy.Engine]:
    """The same database, through connections that fail on a lock held for 5 s instead of waiting."""
    engine = sqlalchemy.create_engine(database_url, connect_args={"options": "-c lock_timeout=5s"})
    yield engine
    engine.dispose()


def feeder_on(engine: sqlalchemy.Engine, batch: int) -> InboxFeeder:
    return InboxFeeder(OutboxStore(engine), InboxStore(engine), batch=batch)


def read_rows(engine: sqlalchemy.Engine) -> list[int]:
    with engine.connect() as connection:
        return list(connection.execute(sqlalchemy.text("select outbox_id from inbox_read order by outbox_id")).scalars())


def issues(inbox: InboxStore) -> list[tuple]:
    """(title, event count, stored events) per issue."""
    return query(inbox, "select title, event_count, (select count(*) from inbox_event e where e.issue_id = i.id)"
                        " from inbox_issue i order by title")


def test_two_feeders_claim_disjoint_rows(inbox: InboxStore, engine: sqlalchemy.Engine, impatient: sqlalchemy.Engine,
                                         paused: list) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error(f"'{name}'"))) for name in ("a", "b", "c", "d", "e", "f")])
    first = start(paused, Paused(outbox, inbox, batch=3))
    second = feeder_on(impatient, batch=3)
    assert second.feed_once() == 3  # the three rows the first does not hold, stored while it holds its own
    assert read_rows(engine) == [4, 5, 6]
    assert second.feed_once() == 0  # the first's: skipped, not waited for
    first.go.set()
    paused[0][1].join(30)
    assert (first.ingested, second.ingested, first.rejected, second.rejected) == (3, 3, 0, 0)
    assert read_rows(engine) == [1, 2, 3, 4, 5, 6]
    assert issues(inbox) == [(f"KeyError: '{name}'", 1, 1) for name in "abcdef"]


def test_an_issue_another_feeder_writes_is_set_aside_then_written_once(
    inbox: InboxStore, engine: sqlalchemy.Engine, impatient: sqlalchemy.Engine, paused: list,
) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error(f"'{name}'"))) for name in ("hot", "hot", "hot", "cold", "hot")])
    first = start(paused, Paused(outbox, inbox, batch=2))  # rows 1-2: the hot issue, held
    second = feeder_on(impatient, batch=3)
    assert second.feed_once() == 3  # rows 3-5: the cold event written, the hot ones set aside
    assert second.ingested == 1 and len(second.set_aside) == 2
    assert read_rows(engine) == [4]
    first.go.set()
    paused[0][1].join(30)
    assert second.feed_once() == 2 and second.ingested == 3  # the two set aside, now the first committed
    assert read_rows(engine) == [1, 2, 3, 4, 5]
    assert issues(inbox) == [("KeyError: 'cold'", 1, 1), ("KeyError: 'hot'", 4, 4)]


def test_an_envelope_set_aside_that_another_feeder_stored_meanwhile_is_not_stored_again(
    inbox: InboxStore, engine: sqlalchemy.Engine, impatient: sqlalchemy.Engine, paused: list,
) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error("'hot'"))) for _ in range(2)])
    first = start(paused, Paused(outbox, inbox, batch=1))
    second = feeder_on(impatient, batch=1)
    assert second.feed_once() == 1 and len(second.set_aside) == 1  # row 2, set aside: the first holds the issue
    first.go.set()
    paused[0][1].join(30)
    assert feeder_on(engine, batch=1).feed_once() == 1  # a third feeder takes row 2 and stores it
    assert second.feed_once() == 0 and not second.set_aside  # claimed again, found read: left out
    assert (second.ingested, second.rejected) == (0, 0)
    assert read_rows(engine) == [1, 2] and issues(inbox) == [("KeyError: 'hot'", 2, 2)]
    assert query(inbox, "select count(*) from outbox where status = 'rejected'") == [(0,)]


def test_a_feeder_that_set_its_whole_batch_aside_waits_for_the_issue_next_time(
    inbox: InboxStore, engine: sqlalchemy.Engine, paused: list,
) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(error("'hot'"))) for _ in range(3)])
    first = start(paused, Paused(outbox, inbox, batch=1))
    second = feeder_on(engine, batch=2)
    assert second.feed_once() == 2 and second.ingested == 0  # all set aside: nothing written
    waiting = threading.Thread(target=second.feed_once)
    waiting.start()
    deadline = time.monotonic() + 30  # until it waits for the first's keys (or, wrongly, returns)
    while waiting.is_alive() and not advisory_waits(engine) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert advisory_waits(engine) == 1  # it waits rather than set its rows aside again and again
    first.go.set()
    waiting.join(30)
    assert second.ingested == 2 and read_rows(engine) == [1, 2, 3]
    assert issues(inbox) == [("KeyError: 'hot'", 3, 3)]


def advisory_waits(engine: sqlalchemy.Engine) -> int:
    with engine.connect() as connection:
        return int(connection.execute(sqlalchemy.text(
            "select count(*) from pg_locks where locktype = 'advisory' and not granted")).scalar_one())


class Runs:
    """Retention that counts its runs, each taking `seconds` (a test seam, not a mock)."""

    def __init__(self, seconds: float = 0.0) -> None:
        self.seconds, self.runs, self.running = seconds, 0, False

    def run(self) -> Evicted:
        self.runs, self.running = self.runs + 1, True
        time.sleep(self.seconds)
        self.running = False
        return Evicted()


@pytest.mark.anyio
async def test_retention_runs_in_one_feeder_at_a_time_and_keeps_its_lease_while_it_runs(
    inbox: InboxStore, engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("app.ingest.feeder.RENEW_S", 0.05)
    retentions = [Runs(0.3), Runs(0.3)]
    leases = [Lease(engine, "inbox-retention", holder) for holder in ("one", "two")]
    feeders = [InboxFeeder(OutboxStore(engine), inbox, retention=retention, retention_every_s=0.0, retention_lease=lease)
               for retention, lease in zip(retentions, leases, strict=True)]
    renewed_while_running = []
    hold = leases[0].hold
    leases[0].hold = lambda: renewed_while_running.append(retentions[0].running) or hold()
    for _ in range(3):
        for feeder in feeders:
            await feeder._turn()
    assert [retention.runs for retention in retentions] == [3, 0]
    assert sum(renewed_while_running) >= 3  # renewed while each 0.3 s run went on (every 0.05 s here)
