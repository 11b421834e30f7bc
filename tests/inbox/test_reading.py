"""Reading the inbox back on a real database: what cannot be read is that row's problem, never
the page's."""

from __future__ import annotations

import json
import uuid

import pytest
import sqlalchemy

from app.inbox.reading import InboxReader
from app.inbox.tables import LOGS
from app.inbox.trace_reading import TraceReader
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from reflex_lookout.outbox import LOCAL, OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope

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


def test_a_trace_reads_back_its_errors_and_log_lines_and_a_line_finds_its_error(inbox: InboxStore) -> None:
    traced, other = "ab" * 16, "cd" * 16
    first, second, elsewhere, untraced = (error(f"'{n}'", kind) for n, kind in (
        ("first", "CartError"), ("second", "PayError"), ("elsewhere", "CartError"), ("nowhere", "CartError")))
    for event, trace_id in ((first, traced.upper()), (second, traced), (elsewhere, other)):  # an SDK in capitals too
        event["contexts"] = {"trace": {"trace_id": trace_id, "span_id": "e" * 16}}
    inbox.ingest_envelope(build(LOCAL_DSN, [*((("event", json.dumps(e).encode())) for e in (first, second, elsewhere, untraced)),
                                            ("log", json.dumps({"items": [
                                                {"timestamp": 2.0, "level": "warn", "body": "declined", "trace_id": traced},
                                                {"timestamp": 1.0, "level": "info", "body": "started", "trace_id": traced},
                                                {"timestamp": 1.5, "level": "info", "body": "other", "trace_id": other},
                                            ]}).encode())]))
    reader = TraceReader(inbox.engine)
    assert [e["event_id"] for e in reader.trace_errors(traced.upper())] == [first["event_id"], second["event_id"]]
    assert [line["body"] for line in reader.trace_logs(traced)] == ["started", "declined"]
    issues = {e["event_id"]: e["issue_id"] for e in reader.trace_errors(traced) + reader.trace_errors(other)}
    assert reader.issues_of_traces([traced, other, "ef" * 16, ""]) == {
        traced: min(issues[first["event_id"]], issues[second["event_id"]]), other: issues[elsewhere["event_id"]]}
    assert reader.trace_errors("") == []  # an event with no trace is in none
