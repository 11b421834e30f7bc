"""Inbound filters in the inbox's writer, with the real sentry-sdk's envelopes and through the outbox
and feeder: what a project's filters drop is never stored (no event, issue, tag or transaction row)
and is counted per filter in the database, where any worker and the next start read it."""

from __future__ import annotations

import dataclasses
import json

import pytest
import sentry_sdk

from app.inbox.reading import InboxReader
from app.ingest.store import InboxStore
from app.projects.filter_options import FilterOptions
from app.projects.options_store import ProjectOptionsStore
from plugin_support.envelopes import build
from reflex_lookout.outbox import OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import READ, error, event_envelope, feed, query, sentry_sdk_envelopes, statuses

STORED = ("inbox_event", "inbox_issue", "inbox_issue_tag", "inbox_grouphash", "inbox_transaction")


def stored(inbox: InboxStore) -> dict[str, int]:
    return {table: query(inbox, f"select count(*) from {table}")[0][0] for table in STORED}  # noqa: S608 (constant names)


def test_a_filtered_event_is_never_stored_and_is_counted(inbox: InboxStore) -> None:
    filters = dataclasses.replace(FilterOptions(), releases=("*-canary",), health_checks=True)
    ProjectOptionsStore(inbox.engine).set_filters(1, filters, by="max")
    with sentry_sdk_envelopes(release="2.0.0-canary", traces_sample_rate=1.0) as dropped:
        sentry_sdk.capture_exception(ValueError("only in the canary"))
        with sentry_sdk.start_transaction(name="GET /healthz"):
            pass
        sentry_sdk.flush()
    with sentry_sdk_envelopes(release="2.0.0", traces_sample_rate=1.0) as kept:
        sentry_sdk.capture_exception(ValueError("in the release"))
        with sentry_sdk.start_transaction(name="GET /healthz"):  # a health check, dropped whatever the release
            pass
        sentry_sdk.flush()
    empty = stored(inbox)
    results = [inbox.ingest_envelope(body, dsn=LOCAL_DSN) for body in dropped]
    assert sum(r.filtered for r in results) == 2 and sum(r.events + r.transactions for r in results) == 0
    assert stored(inbox) == empty  # nothing of them: no event, issue, tag, hash or transaction
    results = [inbox.ingest_envelope(body, dsn=LOCAL_DSN) for body in kept]
    assert (sum(r.events for r in results), sum(r.transactions for r in results), sum(r.filtered for r in results)) == (1, 0, 1)
    assert query(inbox, "select title from inbox_issue") == [("ValueError: in the release",)]
    # Counted in the database, under the first filter that matched (the canary's health check: its
    # release); another process (a new store) reads the same numbers.
    assert InboxReader(inbox.engine).dropped(1) == {"releases": 2, "health_checks": 1}


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)  # the counting is the test above's
def test_an_envelope_keeps_what_no_filter_drops(inbox: InboxStore) -> None:
    """The default filters drop a crawler's error; the feedback and log in its envelope are kept."""
    crawler = {"event_id": "a" * 32, "message": "hello", "request": {"headers": {"User-Agent": "Googlebot/2.1"}}}
    body = build(LOCAL_DSN, [("event", json.dumps(crawler).encode()),
                             ("feedback", b'{"contexts": {"feedback": {"message": "nice"}}}')])
    result = inbox.ingest_envelope(body)
    assert (result.filtered, result.events, result.feedback) == (1, 0, 1)
    inbox.ingest_envelope(event_envelope({"event_id": "b" * 32, "message": "hello"}))  # no agent: kept
    assert query(inbox, "select count(*) from inbox_event") == [(1,)]
    assert InboxReader(inbox.engine).dropped(1) == {"web_crawlers": 1}



@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_through_the_outbox_a_filtered_event_is_read_counted_and_not_stored(inbox: InboxStore) -> None:
    """The feeder's path: the row is read (never retried), its crawler's event is counted, not stored."""
    outbox = OutboxStore(inbox.engine)
    crawler = {**error("'cart'"), "request": {"headers": {"User-Agent": "Mozilla/5.0 (compatible; bingbot/2.0)"}}}
    feed(outbox, inbox, [crawler, error("'cart'")], at=100.0)
    assert statuses(inbox.engine) == [(READ, ""), (READ, "")]
    assert query(inbox, "select count(*), sum(event_count) from inbox_issue") == [(1, 1)]
    assert InboxReader(inbox.engine).dropped(1) == {"web_crawlers": 1}
