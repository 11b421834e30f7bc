"""The tag index of events stored before migration 0015: the background pass counts them as ingest
would have (against a fresh inbox fed the same envelopes), in bounded steps, once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sentry_sdk
import sqlalchemy

from app import db
from app.ingest.feeder import InboxFeeder
from app.ingest.incoming import Incoming
from app.ingest.store import InboxStore
from app.ingest.tag_backfill import TagBackfill, backfill_step, pending
from app.ingest.tag_counter import count_queued
from reflex_lookout.background import Lease
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import as_of_revision, local_rows, query, sentry_sdk_envelopes

AT = 1_700_000_000.0
Received = tuple[bytes, float]  # an envelope and when it was received
Index = dict[tuple[str, str, str], tuple[int, float, float]]  # (issue fingerprint, key, value) → count, first, last


def sdk_events(count: int, first: int = 0) -> list[bytes]:
    """The real sentry-sdk's envelopes: errors and messages in three issues, with varied tags."""
    with sentry_sdk_envelopes(release="shop@2.1", environment="production", server_name="web-1") as bodies:
        for n in range(first, first + count):
            sentry_sdk.set_tag("customer.tier", ("gold", "silver")[n % 2])
            sentry_sdk.set_user({"id": str(n % 3), "email": f"user{n % 3}@example.com"})
            if n % 3 == 2:
                sentry_sdk.capture_message("checkout was slow", level="warning")
                continue
            try:
                raise (KeyError if n % 3 else ValueError)("cart")
            except (KeyError, ValueError) as exc:
                sentry_sdk.capture_exception(exc)
    return bodies


def old_install(engine: sqlalchemy.Engine, bodies: list[bytes]) -> list[Received]:
    """An install at revision 0014 that stored `bodies` (the first half in their outbox rows, through
    the feeder; the rest as their text), then migrated to head; each body with when it was received."""
    half = len(bodies) // 2
    with as_of_revision(engine, "0014_sourcemap_uploads"):
        inbox = InboxStore(engine)
        inbox.ensure_project(Dsn.parse(LOCAL_DSN))
        outbox = OutboxStore(engine)
        local_rows(outbox, bodies[:half], AT)
        while InboxFeeder(outbox, inbox).feed_once():
            pass
        for n, body in enumerate(bodies[half:]):
            inbox.ingest_envelope(body, received_at=AT + 1 + n, dsn=LOCAL_DSN)
    db.migrate(engine)
    return [(body, AT if n < half else AT + 1 + n - half) for n, body in enumerate(bodies)]


def fresh_index(tmp_path: Path, received: list[Received]) -> Index:
    """The index a fresh inbox gives the same envelopes, received at the same times."""
    engine = db.engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    db.migrate(engine)
    inbox = InboxStore(engine)
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    inbox.ingest_batch([Incoming(body, "", at, LOCAL_DSN) for body, at in received])
    return index_of(engine)


def index_of(engine: sqlalchemy.Engine) -> Index:
    """The index once the tag counter has added what ingest queued (app/ingest/tag_counter.py)."""
    count_queued(engine)
    with engine.connect() as connection:
        rows = connection.execute(sqlalchemy.text(
            "select i.fingerprint, t.key, t.value, t.count, t.first_seen, t.last_seen"
            " from inbox_issue_tag t join inbox_issue i on i.id = t.issue_id"))
        return {(fingerprint, key, value): (count, first, last) for fingerprint, key, value, count, first, last in rows}


def test_events_stored_before_0015_are_indexed_in_bounded_steps_as_ingest_counts_them(
        engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    received = old_install(engine, sdk_events(11))
    assert index_of(engine) == {} and pending(engine)
    [(next_id, until_id)] = query(InboxStore(engine), "select next_id, until_id from inbox_backfill where name = 'tags'")
    assert until_id - next_id == 10
    steps = []
    while pending(engine):
        steps.append(backfill_step(engine, limit=4))
    assert steps == [4, 4, 3]
    expected = fresh_index(tmp_path, received)
    assert index_of(engine) == expected
    assert expected[next(k for k in expected if k[1:] == ("customer.tier", "gold"))][0] > 0
    # Run again (another worker, a restart): nothing more is counted.
    assert backfill_step(engine, limit=4) == 0
    assert index_of(engine) == expected


def test_a_new_event_between_steps_is_counted_once(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    received, [new] = old_install(engine, sdk_events(8)), sdk_events(1, first=8)
    assert backfill_step(engine, limit=3) == 3
    InboxStore(engine).ingest_envelope(new, received_at=AT + 100, dsn=LOCAL_DSN)  # indexed at ingest
    while pending(engine):
        backfill_step(engine, limit=3)
    assert index_of(engine) == fresh_index(tmp_path, [*received, (new, AT + 100)])


def test_an_event_that_cannot_be_read_is_skipped(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    received = old_install(engine, sdk_events(6))
    with engine.begin() as connection:  # the last event, kept as its text, edited by hand
        connection.execute(sqlalchemy.text(
            "update inbox_event set payload = '{\"broken' where id = (select max(id) from inbox_event)"))
    assert backfill_step(engine, limit=10) == 5
    assert not pending(engine)
    assert index_of(engine) == fresh_index(tmp_path, received[:-1])


def test_an_install_without_events_has_no_pass(engine: sqlalchemy.Engine) -> None:
    with as_of_revision(engine, "0014_sourcemap_uploads"):
        pass
    db.migrate(engine)
    assert not pending(engine)
    assert backfill_step(engine) == 0


@pytest.mark.anyio
async def test_two_workers_run_the_pass_once_under_its_lease_and_stop_when_done(
        engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    received = old_install(engine, sdk_events(9))
    workers = [TagBackfill(engine, Lease(engine, "tag-backfill"), limit=2, pause_s=0.01) for _ in range(2)]
    await asyncio.wait_for(asyncio.gather(*(worker.run() for worker in workers)), 30)
    assert sorted(worker.indexed for worker in workers) == [0, 9]  # one held the lease throughout
    assert not pending(engine)
    assert index_of(engine) == fresh_index(tmp_path, received)
    assert query(InboxStore(engine), "select count(*) from worker_lease where until > 0") == [(0,)]  # released
