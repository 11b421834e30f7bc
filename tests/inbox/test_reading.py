"""Reading the inbox back on a real database: what cannot be read is that row's problem, never
the page's."""

from __future__ import annotations

import json
import uuid

import pytest
import sqlalchemy

from app.inbox.reading import InboxReader, TraceReader
from app.inbox.tables import LOGS
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from app.monitoring.outbox import LOCAL, OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope
from tests.monitoring.envelopes import build

# Stored before the inbox refused such documents (or written by hand): each is its own problem when
# read back, never the page's. Python's decoder raised RecursionError on the first.
UNREADABLE = {"deep": '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nan": '{"timestamp": NaN}', "broken": "{"}


@pytest.mark.parametrize("kind", UNREADABLE)
def test_a_stored_event_that_cannot_be_read_is_none_and_the_others_still_are(inbox: InboxStore, kind: str) -> None:
    kept, spoiled = error("'same'"), error("'same'")
    for event in (kept, spoiled):
        inbox.ingest_envelope(event_envelope(event))
    with inbox.engine.begin() as connection:
        connection.execute(sqlalchemy.text("update inbox_event set payload = :bad where event_id = :id"),
                           {"bad": UNREADABLE[kind], "id": spoiled["event_id"]})
    reader = InboxReader(inbox.engine)
    assert reader.event(spoiled["event_id"]) is None and reader.latest_event(1) is None
    assert reader.event(kept["event_id"])["event"] == kept and reader.issue_event(1, 1) == (kept, 2)


def test_an_event_whose_envelope_row_cannot_be_read_is_none(inbox: InboxStore) -> None:
    event = error("'kept in its envelope'")
    body = event_envelope(event)
    outbox = OutboxStore(inbox.engine)
    outbox.add_many([{"dsn": LOCAL_DSN, "status": LOCAL, "received_at": 1.0, "size": len(body), "body": body}])
    assert InboxFeeder(outbox, inbox).feed_once() == 1
    with inbox.engine.begin() as connection:  # the row's body spoiled: its header no longer JSON
        connection.execute(sqlalchemy.text("update outbox set body = :bad"), {"bad": b"{" + body})
    assert InboxReader(inbox.engine).event(event["event_id"]) is None
    assert InboxReader(inbox.engine).issue_event(1, 0) is None


@pytest.mark.parametrize("kind", UNREADABLE)
def test_a_stored_transaction_that_cannot_be_read_is_left_out_of_its_trace(inbox: InboxStore, kind: str) -> None:
    for name in ("/kept", "/spoiled"):
        inbox.ingest_envelope(build(LOCAL_DSN, [("transaction", json.dumps({
            "event_id": uuid.uuid4().hex, "transaction": name, "start_timestamp": 1.0, "timestamp": 2.0,
            "contexts": {"trace": {"trace_id": "f" * 32, "span_id": uuid.uuid4().hex[:16]}}}).encode())]))
    with inbox.engine.begin() as connection:
        connection.execute(sqlalchemy.text("update inbox_transaction set payload = :bad where name = '/spoiled'"),
                           {"bad": UNREADABLE[kind]})
    assert [t["transaction"] for t in TraceReader(inbox.engine).trace("f" * 32)] == ["/kept"]


def test_a_log_line_stored_with_an_infinite_timestamp_reads_as_no_time(inbox: InboxStore) -> None:
    with inbox.engine.begin() as connection:
        connection.execute(LOGS.insert(), [{"project_id": 1, "timestamp": value, "level": "info", "body": body,
                                            "trace_id": "", "attributes": "{}"}
                                           for value, body in ((float("inf"), "inf"), (5.0, "five"))])
    assert [(line["body"], line["timestamp"]) for line in TraceReader(inbox.engine).logs()] == [("five", 5.0), ("inf", 0.0)]
