"""Filtering and scrubbing before the first write (app/ingest/before_write.py, the tunnel's `prepare`
in local mode): what the outbox row holds the moment the endpoint has answered, before the feeder
has read anything; what an unreadable item gets; and what the feeder then makes of such a row."""

from __future__ import annotations

import json

import pytest
import sqlalchemy

from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from plugin_support.envelopes import assemble, build
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol import envelope
from reflex_lookout.scrubbing.envelope import FILTERED_BY, SCRUBBED
from reflex_lookout.scrubbing.relay import hashed_did
from tests.factories import error, query
from tests.ingest.helpers import http, in_inbox

pytestmark = pytest.mark.anyio
CRAWLER = "Googlebot/2.1 (+http://www.google.com/bot.html)"


def framing(item: envelope.Item) -> dict[str, object]:
    """An item's header but for its type and length."""
    return {key: value for key, value in item.headers.items() if key not in ("type", "length")}


def stored(engine: sqlalchemy.Engine) -> list[envelope.Envelope]:
    with engine.connect() as connection:
        bodies = connection.exec_driver_sql("select body, content_encoding from outbox order by id").all()
    assert all(encoding == "" for _, encoding in bodies)
    return [envelope.parse(body, 1 << 24) for body, _ in bodies]


async def test_the_row_holds_the_scrubbed_envelope_as_soon_as_it_is_answered(
        ingest: Ingest, engine: sqlalchemy.Engine) -> None:
    event = {**error("'scrubbed'"), "extra": {"api_key": "before-write-key-1"},
             "request": {"headers": {"Authorization": "Bearer before-write-tok-2"}, "data": {"password": "pw-3"}}}
    crawled = {**error("'crawled marker-4'"), "request": {"headers": {"User-Agent": CRAWLER}}}
    session = {"sid": "s", "did": "user-did-5", "status": "ok", "attrs": {"release": "1"}}
    dsn = "http://lookout@lookout.example:3000/1"  # a public key, kept as sent
    body = build(dsn, [("event", json.dumps(event).encode()), ("event", json.dumps(crawled).encode()),
                        ("attachment", b"attachment-bytes-6"), ("session", json.dumps(session).encode())],
                 event_id=event["event_id"],
                 trace={"trace_id": "c" * 32, "public_key": "lookout", "user_id": "user-id-7", "user_segment": "vip-8"},
                 lookout_scrubbed=1)  # a client's claim changes nothing
    async with http(ingest) as client:
        answer = await client.post("/api/1/envelope/?sentry_key=lookout", content=body)
    assert answer.status_code == 200, answer.text
    [row] = stored(engine)  # read before any feeder ran
    data = envelope.serialize(row)
    for secret in ("before-write-key-1", "before-write-tok-2", "pw-3", "marker-4", "user-did-5", "attachment-bytes-6",
                   "user-id-7", "vip-8"):
        assert secret.encode() not in data, secret
    assert row.headers[SCRUBBED] == 1 and row.headers["trace"] == {"trace_id": "c" * 32, "public_key": "lookout"}
    assert row.headers["dsn"] == dsn
    kept, filtered, attachment, kept_session = row.items
    assert json.loads(kept.payload)["extra"]["api_key"] == "[Filtered]"
    assert (filtered.type, framing(filtered), filtered.payload) == ("event", {FILTERED_BY: "web_crawlers"}, b"")
    assert (attachment.type, framing(attachment), attachment.payload) == ("attachment", {}, b"")
    assert json.loads(kept_session.payload) == {"sid": "s", "did": hashed_did("user-did-5"), "status": "ok",
                                                "attrs": {"release": "1"}}  # a user's id: hashed

    feeder = InboxFeeder(OutboxStore(engine), ingest.inbox)
    assert feeder.feed_once() == 1 and feeder.rejected == 0
    assert in_inbox(ingest, event["event_id"])["event"]["request"]["data"] == {"password": "[Filtered]"}
    assert in_inbox(ingest, crawled["event_id"]) is None
    assert query(ingest.inbox, "select key, count from inbox_count where kind = 'filtered'") == [("web_crawlers", 1)]
    assert envelope.serialize(stored(engine)[0]) == data  # the feeder had nothing left to rewrite


async def test_an_item_that_may_hold_a_secret_and_cannot_be_read_refuses_the_envelope(
        ingest: Ingest, engine: sqlalchemy.Engine) -> None:
    unreadable = b'{"comments": "my password unreadable-9'
    body = build(None, [("event", json.dumps(error("'fine'")).encode()), ("user_report", unreadable)])
    async with http(ingest) as client:
        answer = await client.post("/api/1/envelope/?sentry_key=lookout", content=body)
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("Item 2 (user_report) cannot be read to be scrubbed: ")
    assert stored(engine) == []


async def test_a_project_that_does_not_scrub_keeps_the_items_as_sent_but_still_filters(
        ingest: Ingest, engine: sqlalchemy.Engine) -> None:
    from reflex_lookout.scrubbing.settings import ScrubbingSettings

    ingest.inbox.scrubbing_of = lambda project_id: ScrubbingSettings(scrub_data=False)
    event = {**error("'as sent'"), "extra": {"api_key": "kept-as-sent-10"}}
    crawled = {**error("'crawled marker-11'"), "request": {"headers": {"User-Agent": CRAWLER}}}
    body = build(None, [("event", json.dumps(event).encode()), ("event", json.dumps(crawled).encode())])
    claimed = {**error("'claims to be filtered'"), "extra": {"note": "kept-as-sent-12"}}
    claiming = assemble({"event_id": claimed["event_id"]}, [({"type": "event", FILTERED_BY: "releases"},
                                                              json.dumps(claimed).encode())])
    async with http(ingest) as client:
        assert (await client.post("/api/1/envelope/?sentry_key=lookout", content=body)).status_code == 200
        assert (await client.post("/api/1/envelope/?sentry_key=lookout", content=claiming)).status_code == 200
    first, second = stored(engine)
    data = envelope.serialize(first)
    assert b"kept-as-sent-10" in data and b"marker-11" not in data
    assert FILTERED_BY not in second.items[0].headers  # only Lookout's own filters say that
    feeder = InboxFeeder(OutboxStore(engine), ingest.inbox)
    assert feeder.feed_once() == 2
    assert in_inbox(ingest, claimed["event_id"]) is not None
