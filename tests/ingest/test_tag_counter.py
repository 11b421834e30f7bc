"""The tag index counted after the ingest transaction (app/ingest/tag_counter.py): the feeder's
transaction only queues a batch's counts; the tag counter, running as the app runs it, adds them into
the index exactly as the stored events' tags count; a SIGKILL mid-step neither loses nor doubles a
count; merge, unmerge and deletion with counts still queued keep the index exact."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys

import pytest
import sentry_sdk
import sqlalchemy

from app import db
from app.inbox import eviction
from app.inbox.merge import merge, unmerge
from app.inbox.reading import KEPT, kept_events
from app.inbox.tables import EVENTS
from app.inbox.tag_index import derived_tags
from app.ingest.event_writer import FIND_ISSUE
from app.ingest.feeder import InboxFeeder
from app.ingest.incoming import Incoming
from app.ingest.store import InboxStore
from app.ingest.tag_counter import TagCounter, count_queued, queued
from reflex_lookout.background import Lease
from reflex_lookout.outbox import OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import as_of_revision, local_rows, query, sentry_sdk_envelopes

AT = 1_700_000_000.0
Index = dict[tuple[int, str, str], tuple[int, float, float]]  # (issue, key, value) → count, first, last seen


def sdk_events(count: int, kinds: int = 3) -> list[bytes]:
    """The real sentry-sdk's errors in `kinds` issues, with tags that vary from event to event."""
    with sentry_sdk_envelopes(release="shop@2.1", environment="production") as bodies:
        for n in range(count):
            sentry_sdk.set_tag("customer.tier", ("gold", "silver", "bronze")[n % 3])
            sentry_sdk.set_user({"id": str(n % 7), "email": f"user{n % 7}@example.com"})
            capture([KeyError, ValueError, TypeError, LookupError][n % kinds], f"cart {n % kinds}")
    return bodies


def capture(kind: type[Exception], message: str) -> None:
    """Raised and reported in a frame of its own (the SDK sends a frame's locals: not the bodies so far)."""
    try:
        raise kind(message)
    except Exception as exc:  # noqa: BLE001 - the SDK reports what was raised
        sentry_sdk.capture_exception(exc)


def index_of(inbox: InboxStore) -> Index:
    return {(issue, key, value): (count, first, last) for issue, key, value, count, first, last in query(
        inbox, "select issue_id, key, value, count, first_seen, last_seen from inbox_issue_tag")}


def counted_from_events(inbox: InboxStore) -> Index:
    """The index the stored events make: each one's tags, in the issue it is in now, counted."""
    found: Index = {}
    with inbox.engine.connect() as connection:
        rows = connection.execute(sqlalchemy.select(EVENTS.c.issue_id, EVENTS.c.received_at, *KEPT)).all()
        for row, event in zip(rows, kept_events(connection, [row[2:] for row in rows]), strict=True):
            assert event is not None
            for key, value in derived_tags(event):
                count, first, last = found.get((row.issue_id, key, value), (0, row.received_at, row.received_at))
                found[(row.issue_id, key, value)] = (count + 1, min(first, row.received_at), max(last, row.received_at))
    return found


def queue_one_by_one(inbox: InboxStore, bodies: list[bytes]) -> None:
    """Each envelope in an ingest transaction of its own, as the feeder stores a batch: counts queued."""
    for n, body in enumerate(bodies):
        inbox.ingest_batch([Incoming(body, "", AT + n, LOCAL_DSN)])


@pytest.mark.anyio
async def test_the_feeder_only_queues_and_the_running_counter_adds_what_the_events_hold(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    local_rows(outbox, sdk_events(60), AT)
    feeder = InboxFeeder(outbox, inbox)
    while feeder.feed_once():
        pass
    assert feeder.ingested == 60
    assert index_of(inbox) == {} and queued(inbox.engine) > 0  # nothing counted in the ingest transaction

    counter = TagCounter(inbox.engine, Lease(inbox.engine, "tag-counter"), interval_s=0.05)
    task = asyncio.create_task(counter.run())
    counter.wake()
    try:
        async with asyncio.timeout(15):
            while queued(inbox.engine):
                await asyncio.sleep(0.02)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    expected = counted_from_events(inbox)
    assert len(expected) > 20 and index_of(inbox) == expected
    assert query(inbox, "select count from inbox_issue_tag where key = 'environment'") == [(20,), (20,), (20,)]


STEPS = """
import sys
import sqlalchemy
from app import db
from app.ingest.tag_counter import count_queued
engine = db.engine(sys.argv[1])

@sqlalchemy.event.listens_for(engine, "after_cursor_execute")
def hold(connection, cursor, statement, *_):
    if "DELETE FROM inbox_tag_queue" in statement:  # the step's last statement ran, not committed: wait
        sys.stdout.write("!")
        sys.stdout.flush()
        sys.stdin.buffer.read(1)

print("started", flush=True)
while count_queued(engine, 1):
    pass
"""


def test_a_counter_sigkilled_mid_step_neither_loses_nor_doubles_a_count(inbox: InboxStore) -> None:
    """A counter process is killed inside a step: its upsert and its DELETE have run, uncommitted."""
    queue_one_by_one(inbox, sdk_events(60, kinds=4))
    expected = counted_from_events(inbox)
    url = inbox.engine.url.render_as_string(hide_password=False)
    for steps in (0, 3, 7):
        before = queued(inbox.engine)
        process = subprocess.Popen([sys.executable, "-c", STEPS, url], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   env=os.environ.copy())
        assert process.stdin is not None and process.stdout is not None
        assert process.stdout.readline() == b"started\n"
        process.stdin.write(b"x" * steps)  # `steps` steps let through to their commit
        process.stdin.flush()
        assert process.stdout.read(steps + 1) == b"!" * (steps + 1)  # and stopped inside the next one
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert queued(inbox.engine) == before - steps  # the killed step's row is still queued
    while count_queued(inbox.engine):
        pass
    assert index_of(inbox) == expected


def test_merge_unmerge_and_deletion_with_counts_still_queued(inbox: InboxStore) -> None:
    queue_one_by_one(inbox, sdk_events(24, kinds=4))
    issue_ids = [row[0] for row in query(inbox, "select id from inbox_issue order by id")]
    assert len(issue_ids) == 4 and queued(inbox.engine) == 24
    with inbox.engine.begin() as connection:  # two issues merged while their counts wait
        stays = merge(connection, issue_ids[:2], "ada")
    count_queued(inbox.engine)
    assert index_of(inbox) == counted_from_events(inbox)
    assert {issue for issue, _, _ in index_of(inbox)} == {stays, *issue_ids[2:]}

    queue_one_by_one(inbox, sdk_events(8, kinds=4))  # more counts queued, then a hash unmerged
    gone = next(issue for issue in issue_ids[:2] if issue != stays)
    fingerprint = query(inbox, f"select fingerprint from inbox_grouphash where issue_id = {stays} order by id")[-1][0]
    with inbox.engine.begin() as connection:
        new_id = unmerge(connection, stays, fingerprint, "ada")
    count_queued(inbox.engine)
    assert index_of(inbox) == counted_from_events(inbox)
    assert new_id not in (stays, gone) and any(issue == new_id for issue, _, _ in index_of(inbox))

    queue_one_by_one(inbox, sdk_events(8, kinds=4))  # and an issue deleted with counts queued
    with inbox.engine.begin() as connection:
        eviction.delete_issues(connection, [issue_ids[3]])
    count_queued(inbox.engine)
    assert not any(issue == issue_ids[3] for issue, _, _ in index_of(inbox))
    assert queued(inbox.engine) == 0 and index_of(inbox) == counted_from_events(inbox)


def test_counts_queued_by_an_earlier_version_are_counted_after_the_upgrade(inbox: InboxStore) -> None:
    """Migration 0024 rewrites queue rows of 0023's form ([key, value, count, first, last] lists) into
    today's ("key\\nvalue" → [count, first, last]), and back on downgrade."""
    with as_of_revision(inbox.engine, "0023_tag_queue"):
        queue_one_by_one(inbox, sdk_events(12, kinds=2))
    earlier = [json.loads(counts) for (counts,) in query(inbox, "select counts from inbox_tag_queue")]
    assert len(earlier) == 12 and all(isinstance(counts, list) and len(counts[0]) == 5 for counts in earlier)
    db.migrate(inbox.engine)
    while count_queued(inbox.engine):
        pass
    expected = counted_from_events(inbox)
    assert len(expected) > 10 and index_of(inbox) == expected


def test_a_counter_step_does_not_wait_for_a_feeder_writing_the_same_issue(inbox: InboxStore) -> None:
    """On PostgreSQL the feeder locks an issue's row while it writes an event of it; the counter's
    upsert checks its foreign key to that row (FOR KEY SHARE). With the row locked FOR UPDATE the two
    waited for each other and deadlocked under load; FOR NO KEY UPDATE lets the step through."""
    if inbox.engine.dialect.name != "postgresql":
        pytest.skip("SQLite writes one transaction at a time: nothing to lock")
    queue_one_by_one(inbox, sdk_events(2, kinds=1))
    [(fingerprint,)] = query(inbox, "select fingerprint from inbox_grouphash")
    impatient = sqlalchemy.create_engine(inbox.engine.url, connect_args={"options": "-c lock_timeout=2000"})
    with inbox.engine.connect() as feeder, feeder.begin():
        assert feeder.execute(FIND_ISSUE, {"project_id": 1, "fingerprint": fingerprint}).first() is not None
        assert count_queued(impatient) == 2  # not "lock timeout": it did not wait for the feeder's lock
    impatient.dispose()
    assert query(inbox, "select count from inbox_issue_tag where key = 'level'") == [(2,)]
