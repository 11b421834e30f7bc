"""What retention deletes, on a real inbox: whole issues with everything that is theirs, events with
the envelopes that held them, and stored sizes in bytes."""

from __future__ import annotations

import json
import time

import sqlalchemy

from app.inbox.eviction import delete_events, delete_issues, stored_bytes
from app.inbox.tables import LOGS
from app.inbox.triage import Triage
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from reflex_lookout.outbox import OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope, local_rows, query


def test_a_deleted_issue_takes_its_events_envelopes_feedback_and_history_and_nothing_else(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    doomed, kept = error("'doomed'"), error("'kept'")
    feedback = {"contexts": {"feedback": {"associated_event_id": doomed["event_id"], "message": "it broke"}}}
    local_rows(outbox, [event_envelope(doomed), event_envelope(kept),
                        build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())])], time.time())
    InboxFeeder(outbox, inbox).feed_once()
    [(issue_id,)] = query(inbox, f"select issue_id from inbox_event where event_id = '{doomed['event_id']}'")
    Triage(inbox.engine).change_status(issue_id, "resolved", "someone")
    with inbox.engine.begin() as connection:
        assert delete_issues(connection, [issue_id]) == 1
    assert query(inbox, "select title from inbox_issue") == [("KeyError: 'kept'",)]
    assert query(inbox, "select event_id from inbox_event") == [(kept["event_id"],)]
    assert query(inbox, "select count(*) from inbox_feedback") == [(0,)]
    assert query(inbox, "select count(*) from inbox_issue_change") == [(0,)]
    # The kept event's envelope stays, and the feedback's (read, no event in it: retention's raw cap).
    assert query(inbox, "select count(*) from outbox") == query(inbox, "select count(*) from inbox_read") == [(2,)]


def test_an_envelope_goes_with_the_last_event_stored_in_it(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    first, second = error("'one'"), error("'two'")
    local_rows(outbox, [build(LOCAL_DSN, [("event", json.dumps(first).encode()), ("event", json.dumps(second).encode())])],
               time.time())
    InboxFeeder(outbox, inbox).feed_once()
    ids = dict(query(inbox, "select event_id, id from inbox_event"))
    with inbox.engine.begin() as connection:
        delete_events(connection, [ids[first["event_id"]]])
    assert query(inbox, "select count(*) from outbox") == [(1,)]
    with inbox.engine.begin() as connection:
        delete_events(connection, [ids[second["event_id"]]])
    assert query(inbox, "select count(*) from outbox") == query(inbox, "select count(*) from inbox_read") == [(0,)]


def test_stored_bytes_are_bytes_not_characters(inbox: InboxStore) -> None:
    line = {"timestamp": 1.0, "level": "info", "body": "é" * 100}
    inbox.ingest_envelope(build(LOCAL_DSN, [("log", json.dumps({"items": [line]}).encode())]))
    with inbox.engine.connect() as connection:
        body, size = connection.execute(sqlalchemy.select(LOGS.c.body, stored_bytes(LOGS.c.body))).one()
    assert (len(body), size) == (100, 200)
