"""The inbox's storage on a real SQLite file: every sample event kept, grouped, stored once."""

from __future__ import annotations

import json
import uuid

import pytest
import sentry_sdk
import sentry_sdk.logger

from app.ingest.incoming import UnknownProject
from app.ingest.store import InboxStore
from app.projects.options_store import ProjectOptionsStore
from app.releases import health
from plugin_support.envelopes import SAMPLE_PATHS, SAMPLES, build
from reflex_lookout.dsn import Dsn
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from tests.environment import LOCAL_DSN
from tests.factories import NO_FILTERS, error, event_envelope, query, sentry_sdk_envelopes, store_all


def test_every_sample_is_kept_with_its_title(inbox: InboxStore) -> None:
    # With no inbound filter on: by default, two samples' old Firefox is a legacy browser's
    # (tests/ingest/test_inbound_filters.py).
    ProjectOptionsStore(inbox.engine).set_filters(1, NO_FILTERS)
    for path in SAMPLE_PATHS:
        result = inbox.ingest_envelope(event_envelope(json.loads(path.read_text())))
        assert result.events + result.duplicates == 1, path.relative_to(SAMPLES)
    [(events,)] = query(inbox, "select count(*) from inbox_event")
    [(issues,)] = query(inbox, "select count(*) from inbox_issue")
    assert events + _duplicate_ids() == len(SAMPLE_PATHS) and 0 < issues <= events
    assert query(inbox, "select count(*) from inbox_issue where title in ('', '<unlabeled event>', '<no message>')") == [(0,)]


def _duplicate_ids() -> int:
    ids = [json.loads(p.read_text()).get("event_id") for p in SAMPLE_PATHS]
    real = [i.replace("-", "").lower() for i in ids if isinstance(i, str) and len(i.replace("-", "")) == 32]
    return len(real) - len(set(real))


def test_the_same_error_twice_is_one_issue_with_two_events(inbox: InboxStore) -> None:
    inbox.ingest_envelope(event_envelope(error("'user'")), received_at=100.0)
    inbox.ingest_envelope(event_envelope(error("'user'")), received_at=200.0)
    inbox.ingest_envelope(event_envelope(error("'user'", kind="ValueError")), received_at=300.0)
    rows = query(inbox, "select title, culprit, event_count, first_seen, last_seen from inbox_issue order by id")
    assert rows == [
        ("KeyError: 'user'", "app.pages.orders in checkout", 2, 100.0, 200.0),
        ("ValueError: 'user'", "app.pages.orders in checkout", 1, 300.0, 300.0),
    ]


def test_a_repeated_event_id_is_stored_once(inbox: InboxStore) -> None:
    event = error("'user'", event_id="3f2a9c1e1b2c4d5e8f90123456789abc")
    first = inbox.ingest_envelope(event_envelope(event))
    again = inbox.ingest_envelope(event_envelope(event))
    assert (first.events, again.events, again.duplicates) == (1, 0, 1)
    assert query(inbox, "select event_count from inbox_issue") == [(1,)]
    [(payload,)] = query(inbox, "select payload from inbox_event")
    assert json.loads(payload) == event  # as the SDK sent it


def test_the_project_comes_from_the_envelope_or_the_outbox_row(inbox: InboxStore) -> None:
    with pytest.raises(UnknownProject, match="names no DSN"):
        inbox.ingest_envelope(event_envelope(error("x"), dsn=None))
    assert inbox.ingest_envelope(event_envelope(error("x"), dsn=None), dsn=LOCAL_DSN).events == 1
    with pytest.raises(UnknownProject, match="No project"):
        inbox.ingest_envelope(event_envelope(error("x"), dsn="http://other@localhost/1"))


def test_transactions_with_spans_and_log_lines_are_kept(inbox: InboxStore) -> None:
    transaction = {
        "event_id": uuid.uuid4().hex, "type": "transaction", "transaction": "/checkout", "platform": "javascript",
        "start_timestamp": 100.0, "timestamp": 100.25,
        "contexts": {"trace": {"trace_id": "a" * 32, "span_id": "b" * 16, "op": "pageload", "status": "ok"}},
        "spans": [{"span_id": "c" * 16, "parent_span_id": "b" * 16, "op": "http.client", "start_timestamp": 100.05,
                   "timestamp": 100.15, "description": "GET /api"}],
    }
    logs = {"items": [
        {"timestamp": 100.1, "level": "warn", "body": "slow response", "trace_id": "a" * 32,
         "attributes": {"route": {"value": "/checkout", "type": "string"}}},
        {"timestamp": 100.2, "level": "info", "body": "done"},
    ]}
    body = build(LOCAL_DSN, [("transaction", json.dumps(transaction).encode()), ("log", json.dumps(logs).encode()),
                             ("attachment", b"raw bytes")])
    result = inbox.ingest_envelope(body)
    assert (result.transactions, result.logs, result.other_items) == (1, 2, {"attachment": 1})
    assert inbox.ingest_envelope(body).duplicates == 1  # the transaction again; log lines have no id
    assert query(inbox, "select name, op, status, trace_id, duration_ms, span_count from inbox_transaction") == [
        ("/checkout", "pageload", "ok", "a" * 32, 250.0, 1)]
    assert query(inbox, "select level, body, trace_id from inbox_log order by id limit 2") == [
        ("warn", "slow response", "a" * 32), ("info", "done", "")]


def test_a_project_keeps_its_key(inbox: InboxStore) -> None:
    assert inbox.ensure_project(Dsn.parse(LOCAL_DSN)) == 1  # again: nothing changes
    with pytest.raises(ValueError, match="another public key"):
        inbox.ensure_project(Dsn.parse("http://other@localhost/1"))


def test_traces_and_logs_are_read_back(inbox: InboxStore) -> None:
    from app.inbox.trace_reading import TraceReader

    for name, start in (("/a", 1.0), ("/b", 2.0)):
        body = build(LOCAL_DSN, [("transaction", json.dumps({
            "event_id": uuid.uuid4().hex, "transaction": name, "start_timestamp": start, "timestamp": start + 0.5,
            "contexts": {"trace": {"trace_id": "f" * 32, "span_id": uuid.uuid4().hex[:16], "op": "navigation"}},
        }).encode()), ("log", json.dumps({"items": [
            {"timestamp": start, "level": "info", "body": f"visited {name}"},
            {"timestamp": start, "level": "error", "body": f"failed {name}"},
        ]}).encode())])
        inbox.ingest_envelope(body)
    reader = TraceReader(inbox.engine)
    listed, total = reader.transactions()
    assert total == 2 and [t["name"] for t in listed] == ["/b", "/a"]
    assert reader.transactions(search="/A")[1] == 1
    assert [t["transaction"] for t in reader.trace("F" * 32)] == ["/a", "/b"]
    assert [line["body"] for line in reader.logs(level="error")] == ["failed /b", "failed /a"]
    assert [line["body"] for line in reader.logs(search="VISITED /a")] == ["visited /a"]


def test_filters_sort_paging_breakdown_and_hours(inbox: InboxStore) -> None:
    from app.inbox.issue_stats import tag_distribution
    from app.inbox.reading import InboxReader
    from app.inbox.search import IssueSearch

    def add(value: str, count: int, **extra: object) -> None:
        for n in range(count):
            inbox.ingest_envelope(event_envelope({**error(value), "tags": {"n": str(n % 2)}, **extra}), received_at=7200.0 + n)

    add("'a'", 3, environment="production", release="shop@1")
    add("'b'", 1, environment="staging", level="warning")
    reader, search = InboxReader(inbox.engine), IssueSearch(inbox.engine)
    assert reader.facets() == {"project": ["1 · Lookout"], "level": ["error", "warning"],
                               "environment": ["production", "staging"], "release": ["shop@1"]}
    assert [i["title"] for i in search.search("environment:staging").issues] == ["KeyError: 'b'"]
    assert [i["title"] for i in search.search("release:shop@1").issues] == ["KeyError: 'a'"]
    assert [i["title"] for i in search.search("level:warning").issues] == ["KeyError: 'b'"]
    assert [i["event_count"] for i in search.search("", sort="freq").issues] == [3, 1]
    issue_a = search.search("release:shop@1").issues[0]["id"]
    latest, stored = reader.issue_event(issue_a, 0)
    oldest, _ = reader.issue_event(issue_a, 2)
    assert stored == 3 and latest["tags"] == {"n": "0"} and oldest["tags"] == {"n": "0"}
    assert reader.issue_event(issue_a, 3) is None
    tags = {(t.key, v.value): v.percent for t in tag_distribution(inbox.engine, issue_a) for v in t.values}
    assert tags[("n", "0")] == 66 and tags[("n", "1")] == 33 and tags[("environment", "production")] == 100
    assert reader.hourly([issue_a], now=7200.0 + 3600) == {issue_a: [0] * 23 + [3]}


def test_feedback_and_counted_items(inbox: InboxStore) -> None:
    from app.inbox.reading import InboxReader

    event = error("'why'")
    inbox.ingest_envelope(event_envelope(event))
    feedback = {"type": "feedback", "contexts": {"feedback": {
        "message": "<b>It broke</b> when I paid", "contact_email": "a@b.example", "name": "Ann",
        "associated_event_id": event["event_id"]}}}
    report = {"event_id": event["event_id"], "name": "Bo", "email": "", "comments": "same here"}
    body = build(LOCAL_DSN, [
        ("feedback", json.dumps(feedback).encode()), ("user_report", json.dumps(report).encode()),
        ("session", json.dumps({"sid": "s", "init": True, "status": "crashed",
                                "attrs": {"release": "r1", "environment": "prod"}}).encode()),
        ("sessions", json.dumps({"aggregates": [{"started": "x", "exited": 3, "errored": 1}],
                                 "attrs": {"release": "r1", "environment": "prod"}}).encode()),
        ("client_report",
         json.dumps({"discarded_events": [{"reason": "queue_overflow", "category": "error", "quantity": 2}]}).encode()),
    ])
    result = inbox.ingest_envelope(body)
    inbox.ingest_envelope(body)  # counts add up; feedback has no id and is kept twice
    assert (result.feedback, result.counted) == (2, 3)
    reader = InboxReader(inbox.engine)
    issue_id = reader.event(event["event_id"])["issue_id"]
    assert [(f["name"], f["message"]) for f in reader.feedback(issue_id)][:2] == [
        ("Bo", "same here"), ("Ann", "<b>It broke</b> when I paid")]
    # One session, sent twice: one; the aggregates (started "x": when received, the same minute) add up.
    assert health.by_status(inbox.engine) == {"healthy": 6, "errored": 2, "abnormal": 0, "crashed": 1}
    assert reader.counts("discarded") == {"error|queue_overflow": 4}


def test_fields_kept_in_columns_are_cut_at_relays_limits(inbox: InboxStore) -> None:
    # The writers' own cuts, so scrubbing off: Relay refuses ids and statuses this long (scrubbed,
    # they are not stored at all: tests/ingest/test_scrubbing.py).
    inbox = InboxStore(inbox.engine, scrubbing_of=lambda project_id: ScrubbingSettings(scrub_data=False))
    long = "v" * (1024 * 1024)
    event = {**error("'long'"), "release": long, "environment": long, "platform": long}
    transaction = {"event_id": uuid.uuid4().hex, "transaction": long, "start_timestamp": 1.0, "timestamp": 2.0,
                   "platform": long, "contexts": {"trace": {"trace_id": long, "span_id": long, "parent_span_id": long,
                                                            "op": long, "status": long}}}
    transaction.update(release=long, environment=long)
    logs = {"items": [{"timestamp": 1.0, "level": long, "body": "b", "trace_id": long, "attributes": {
        "sentry.release": {"value": long, "type": "string"}, "sentry.environment": {"value": long, "type": "string"}}}]}
    inbox.ingest_envelope(build(LOCAL_DSN, [("event", json.dumps(event).encode()),
                                            ("transaction", json.dumps(transaction).encode()),
                                            ("log", json.dumps(logs).encode())]))
    assert query(inbox, "select length(release), length(environment), length(platform) from inbox_event") == [(200, 64, 128)]
    assert query(inbox, "select length(name), length(trace_id), length(span_id), length(parent_span_id), length(op),"
                        " length(status), length(platform), length(release), length(environment)"
                        " from inbox_transaction") == [(200, 64, 64, 64, 128, 128, 128, 200, 64)]
    assert query(inbox, "select length(level), length(trace_id), length(release), length(environment)"
                        " from inbox_log") == [(128, 64, 200, 64)]


def test_transactions_and_log_lines_of_the_real_sentry_sdk_keep_their_environment_and_release(inbox: InboxStore) -> None:
    with sentry_sdk_envelopes(release="shop@2.1", environment="staging", traces_sample_rate=1.0,
                              enable_logs=True) as bodies:
        with sentry_sdk.start_transaction(name="/checkout", op="http.server"):
            sentry_sdk.logger.info("paid {amount}", amount=42)
    store_all(inbox, bodies)
    assert query(inbox, "select name, environment, release from inbox_transaction") == [("/checkout", "staging", "shop@2.1")]
    assert query(inbox, "select body, environment, release from inbox_log") == [("paid 42", "staging", "shop@2.1")]


def test_a_log_lines_environment_and_release_are_read_as_sent_or_left_empty(inbox: InboxStore) -> None:
    attributes = [
        {"sentry.environment": "bare", "sentry.release": 7},  # bare values, as an older SDK might send them
        {"sentry.environment": {"value": True, "type": "boolean"}, "sentry.release": {"value": ["a"], "type": "array"}},
        {"sentry.environment": None, "sentry.release": {"type": "string"}},
        {},
    ]
    inbox.ingest_envelope(build(LOCAL_DSN, [("log", json.dumps({"items": [
        {"timestamp": 1.0, "level": "info", "body": str(n), "attributes": a} for n, a in enumerate(attributes)]}).encode())]))
    assert query(inbox, "select environment, release from inbox_log order by id") == [("bare", "7"), ("", ""), ("", ""), ("", "")]
