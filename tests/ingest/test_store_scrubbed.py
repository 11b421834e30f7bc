"""What the inbox keeps of an envelope: the event, transaction and log lines scrubbed, and no secret
anywhere in the SQLite files (the database, its -wal and -shm, read byte by byte as they are: the test
never checkpoints) once the ingest endpoint has answered the post, nor after the feeder's pass. The real
sentry-sdk reports a request to the ingest endpoint on a real port; an envelope of every item type is
posted to it too.

The feeder's own rewriting is tested on rows inserted raw (`local_row`, as an older Lookout stored
them): those put the secrets in the WAL themselves, so they check the rewritten outbox row and the
inbox's content, never the files. The sample events give the breadth."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path

import anyio.to_thread
import httpx
import pytest
import sentry_sdk
import sqlalchemy
from sentry_sdk.integrations.starlette import StarletteIntegration
from sentry_sdk.scrubber import EventScrubber
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from app.inbox.reading import InboxReader
from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from app.ingest.user_agent import fill_from_user_agent
from app.projects.options_store import ProjectOptionsStore
from plugin_support.envelopes import SAMPLE_PATHS, build
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol import encodings, envelope
from reflex_lookout.scrubbing.relay import scrub
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from tests.environment import LOCAL_DSN
from tests.factories import NO_FILTERS, error, local_row, query, statuses
from tests.ingest.helpers import http, served

# The bytes of a SQLite file are under test: SQLite only.
pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

CARD = "4111 1111 1111 1111"
USER_IP = "198.51.100.23"
# The project's scrubbing options in these tests: Sentry's defaults, the IP addresses too, one more sensitive
# field and one safe field (named like a credential, so the defaults alone would scrub it).
SCRUBBING = ScrubbingSettings(scrub_ip_addresses=True, sensitive_fields=("favourite_colour",), safe_fields=("order_token",))
SDK_SECRETS = ["hunter2-in-the-body", "hunter2-in-a-header", "bearer-tok-in-the-auth-header", "qs-tok-in-the-query",
               "cookie-sess-in-a-cookie", CARD, USER_IP, "teal-is-sensitive-here"]
KEPT = ["gift wrap please", "order-token-is-safe", "ValueError", "payment refused"]


def database_bytes(engine: sqlalchemy.Engine) -> bytes:
    """Everything the SQLite database holds on disk, as the running code leaves it: the database file,
    its write-ahead log (every page version written since the log last started over) and its shared
    index, read as they are. Nothing here checkpoints: the outbox writer's checkpoints run beside it,
    as they do in the app."""
    path = Path(str(engine.url.database))
    files = [path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")]
    assert files[1].exists(), "the database is not in WAL mode"
    return b"".join(file.read_bytes() for file in files if file.exists())


def outbox_bodies(engine: sqlalchemy.Engine) -> list[bytes]:
    """Every outbox row's envelope, decoded (a compressed body hides nothing from this)."""
    with engine.connect() as connection:
        rows = connection.exec_driver_sql("select body, content_encoding from outbox order by id").all()
    return [encodings.decode(body, encoding, 1 << 30) for body, encoding in rows]


def found(secrets: list[str], data: bytes) -> list[str]:
    return [secret for secret in secrets if secret.encode() in data]


def found_on_disk(secrets: list[str], data: bytes) -> list[str]:
    """The secrets in the files' bytes `data`, whole or by either half: where a value straddles two
    pages (a long row spills into overflow pages), the file holds a page pointer, the WAL a frame
    header, between its two parts; one boundary cannot cut both halves. (So each half must be found
    nowhere else: the secrets here are made so.)"""
    return [secret for secret in secrets
            if any(part in data for part in (secret.encode(), secret.encode()[:len(secret) // 2],
                                              secret.encode()[len(secret) // 2:]))]


async def checkout(request: Request) -> None:
    """A shop's endpoint that fails, with the user and extra data of a real app on its scope."""
    order = await request.json()  # sentry-sdk sends the request's JSON body (and this frame's variables)
    sentry_sdk.set_user({"id": "42", "username": "bob", "ip_address": USER_IP})
    # (values from the request, not literals: a frame's source lines are sent too)
    sentry_sdk.set_extra("card", order["card"])
    sentry_sdk.set_extra("favourite_colour", order["favourite_colour"])
    sentry_sdk.set_extra("order_token", order["order_token"])
    sentry_sdk.capture_message(f"paid with {CARD}")
    raise ValueError(f"payment refused for {order['user']}")


async def report_a_failed_checkout(ingest: Ingest, sentry_init) -> list[str]:
    """The real sentry-sdk in a Starlette app (request bodies, default PII, and its own scrubbing off,
    as an SDK without one sends them), reporting over HTTP to the ingest endpoint on a real port;
    the ids of the events it sent, once every post was answered (the feeder has not run)."""
    sent: list[str] = []
    async with served(ingest) as port:
        sentry_init(dsn=f"http://lookout@127.0.0.1:{port}/1", send_default_pii=True, traces_sample_rate=1.0,
                    default_integrations=False, integrations=[StarletteIntegration()],
                    event_scrubber=EventScrubber(denylist=[], send_default_pii=True),
                    before_send=lambda event, hint: sent.append(event["event_id"]) or event,
                    _experiments={"transport_compression_level": 0})  # plain bytes: a byte scan would see them
        shop = Starlette(routes=[Route("/checkout", checkout, methods=["POST"])])  # after init: it patches Starlette
        transport = httpx.ASGITransport(app=shop, raise_app_exceptions=False, client=(USER_IP, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://shop.test") as client:
            answer = await client.post("/checkout?coupon=SPRING&token=qs-tok-in-the-query",
                                       json={"user": "bob", "password": "hunter2-in-the-body", "note": "gift wrap please",
                                             "card": CARD, "favourite_colour": "teal-is-sensitive-here",
                                             "order_token": "order-token-is-safe"},
                                       headers={"Authorization": "Bearer bearer-tok-in-the-auth-header",
                                                "X-Db-Password": "hunter2-in-a-header", "X-Forwarded-For": USER_IP,
                                                "Cookie": "sessionid=cookie-sess-in-a-cookie; theme=dark"})
        assert answer.status_code == 500
        await anyio.to_thread.run_sync(sentry_sdk.flush)
    assert len(sent) == 2  # the message and the error (and a transaction beside them)
    assert outbox_bodies(ingest.inbox.engine) and unread(ingest)  # answered, stored, not read yet
    return sent


def unread(ingest: Ingest) -> int:
    return query(ingest.inbox, "select count(*) from outbox where id not in (select outbox_id from inbox_read)")[0][0]


def feed(ingest: Ingest) -> None:
    """The feeder's pass: every row read into the inbox."""
    while InboxFeeder(ingest.tunnel.store, ingest.inbox).feed_once():
        pass
    assert unread(ingest) == 0


@pytest.mark.anyio
async def test_the_real_sdk_reports_a_request_and_no_secret_is_in_the_database_file(ingest: Ingest, sentry_init) -> None:
    ingest.inbox.scrubbing_of = lambda project_id: SCRUBBING
    message_id, error_id = await report_a_failed_checkout(ingest, sentry_init)
    # Answered: what was written is the scrubbed envelopes alone, in the rows and anywhere in the files.
    bodies = outbox_bodies(ingest.inbox.engine)
    assert len(bodies) >= 3 and [found(SDK_SECRETS, body) for body in bodies] == [[]] * len(bodies)
    on_disk = database_bytes(ingest.inbox.engine)
    assert found_on_disk(SDK_SECRETS, on_disk) == []
    assert found(KEPT, on_disk) == KEPT
    feed(ingest)
    reader = InboxReader(ingest.inbox.engine)
    message, failure = (reader.event(event_id)["event"] for event_id in (message_id, error_id))
    assert message["logentry"]["formatted"] == "paid with [creditcard]"
    request = failure["request"]
    assert request["data"] == {"user": "bob", "password": "[Filtered]", "note": "gift wrap please", "card": "[Filtered]",
                               "favourite_colour": "[Filtered]", "order_token": "order-token-is-safe"}
    assert request["headers"]["authorization"] == request["headers"]["x-db-password"] == "[Filtered]"
    assert request["headers"]["x-forwarded-for"] == "[ip]" and request["headers"]["user-agent"].startswith("python-httpx")
    assert failure["user"] == {"id": "42", "username": "bob", "ip_address": None}
    assert failure["extra"]["favourite_colour"] == "[Filtered]" and failure["extra"]["order_token"] == "order-token-is-safe"
    assert query(ingest.inbox, "select count(*) from inbox_transaction") == [(1,)]
    # Nor after the feeder's pass: neither in the rows of the outbox nor anywhere in the files.
    assert outbox_bodies(ingest.inbox.engine) == bodies
    on_disk = database_bytes(ingest.inbox.engine)
    assert found_on_disk(SDK_SECRETS, on_disk) == []
    assert found(KEPT, on_disk) == KEPT


@pytest.mark.anyio
async def test_without_scrubbing_the_same_report_is_kept_as_sent(ingest: Ingest, sentry_init) -> None:
    """The control: the byte scan above finds what is there, before and after the feeder's pass."""
    ingest.inbox.scrubbing_of = lambda project_id: ScrubbingSettings(scrub_data=False)
    await report_a_failed_checkout(ingest, sentry_init)
    assert found(SDK_SECRETS, database_bytes(ingest.inbox.engine)) == SDK_SECRETS
    feed(ingest)
    assert found(SDK_SECRETS, database_bytes(ingest.inbox.engine)) == SDK_SECRETS


@pytest.mark.anyio
async def test_by_default_the_users_ip_address_is_kept(ingest: Ingest, sentry_init) -> None:
    _, error_id = await report_a_failed_checkout(ingest, sentry_init)
    secrets = [s for s in SDK_SECRETS if s not in (USER_IP, "teal-is-sensitive-here")]
    assert found_on_disk(secrets, database_bytes(ingest.inbox.engine)) == []
    feed(ingest)
    failure = InboxReader(ingest.inbox.engine).event(error_id)["event"]
    assert failure["user"]["ip_address"] == USER_IP and failure["request"]["headers"]["x-forwarded-for"] == USER_IP
    assert failure["extra"]["order_token"] == "[Filtered]"  # not safe by default
    on_disk = database_bytes(ingest.inbox.engine)
    assert found_on_disk(secrets, on_disk) == [] and found([USER_IP], on_disk) == [USER_IP]


# Each kind of item -------------------------------------------------------------------------------
#
# Posted to the ingest endpoint, an envelope is written scrubbed, and nothing else of it reaches the
# files. The other tests here insert rows raw (`local_row`, as an older Lookout stored them, before
# issue 35) to test the FEEDER's rewriting of them: the raw bytes are then in the WAL by the test's own
# insert, so those tests check the rewritten outbox row and the inbox's content, not the files.


def every_item(secret: str) -> bytes:
    """An envelope of each item type the inbox reads, and an attachment, each with `secret` in it."""
    event = {**error("'checkout'"), "extra": {"password": f"event-{secret}", "note": "kept"}}
    transaction = {"event_id": uuid.uuid4().hex, "type": "transaction", "transaction": "/pay", "start_timestamp": 1.0,
                   "timestamp": 2.0, "contexts": {"trace": {"trace_id": "a" * 32, "span_id": "b" * 16}},
                   "request": {"url": f"https://shop.example/pay?token=transaction-{secret}"},
                   "spans": [{"span_id": "c" * 16, "trace_id": "a" * 32, "op": "db", "start_timestamp": 1.0,
                              "timestamp": 1.5, "data": {"db.password": f"span-{secret}"}}]}
    logs = {"items": [{"timestamp": 1.0, "level": "info", "body": f"paid with {CARD}",
                       "attributes": {"api_key": {"type": "string", "value": f"attribute-{secret}"}}}]}
    report = {"event_id": event["event_id"], "name": "Bob", "email": "bob@example.org", "comments": f"my {CARD}"}
    return build(LOCAL_DSN, [("event", json.dumps(event).encode()), ("transaction", json.dumps(transaction).encode()),
                             ("log", json.dumps(logs).encode()), ("user_report", json.dumps(report).encode()),
                             ("attachment", f"attachment-{secret}".encode())], event_id=event["event_id"])


CRAWLED = "crawled-marker-5b1e0c"
CRAWLER_EVENT = {"event_id": "c" * 32, "message": CRAWLED, "request": {"headers": {"User-Agent": "Googlebot/2.1"}}}


@pytest.mark.anyio
async def test_each_item_posted_to_the_endpoint_reaches_the_files_only_scrubbed(ingest: Ingest) -> None:
    """Every item type, and an event the default inbound filters drop (a crawler's), posted to
    /api/1/envelope/: no secret and nothing of the dropped event in the files once the post is
    answered, nor after the feeder's pass; what is no secret is there."""
    tag = "s3-7f3a9c41d2"  # each half of each secret is found nowhere else
    secrets = [f"{kind}-{tag}" for kind in ("event", "transaction", "span", "attribute", "attachment")] + [CARD, CRAWLED]
    async with http(ingest) as client:
        for body in (every_item(tag), build(LOCAL_DSN, [("event", json.dumps(CRAWLER_EVENT).encode())])):
            answer = await client.post("/api/1/envelope/", content=body)
            assert answer.status_code == 200, answer.text
            assert found_on_disk(secrets, database_bytes(ingest.inbox.engine)) == []
    assert [item.type for row in outbox_bodies(ingest.inbox.engine) for item in envelope.parse(row, 1 << 20).items] == [
        "event", "transaction", "log", "user_report", "attachment", "event"]
    kept = ["bob@example.org", "https://shop.example/pay", "'checkout'"]
    assert found(kept, database_bytes(ingest.inbox.engine)) == kept
    feed(ingest)
    assert query(ingest.inbox, "select count(*) from inbox_event") == [(1,)]  # the crawler's is not one
    assert query(ingest.inbox, "select message from inbox_feedback") == [("my [Filtered]",)]
    on_disk = database_bytes(ingest.inbox.engine)
    assert found_on_disk(secrets, on_disk) == [] and found(kept, on_disk) == kept


def test_each_item_is_kept_scrubbed_and_the_row_holds_only_what_was_scrubbed(inbox: InboxStore) -> None:
    """The feeder rewrites a row stored raw (the files hold the raw bytes: see above)."""
    outbox = OutboxStore(inbox.engine)
    outbox.add_many([local_row(every_item("s1"))])
    assert InboxFeeder(outbox, inbox).feed_once() == 1
    [kept] = outbox_bodies(inbox.engine)
    assert b"-s1" not in kept and CARD.encode() not in kept and b"kept" in kept
    parsed = envelope.parse(kept, 1 << 20)
    assert [(item.type, item.headers) for item in parsed.items][-1] == ("attachment", {"type": "attachment", "length": 0})
    # the event is kept where it is, in its (rewritten) row: no second copy
    assert query(inbox, "select payload, item_index from inbox_event") == [("", 0)]
    assert query(inbox, "select body, attributes from inbox_log") == [
        ("paid with [Filtered]", json.dumps({"api_key": {"type": "string", "value": "[Filtered]"}}))]
    [(payload,)] = query(inbox, "select payload from inbox_transaction")
    assert "-s1" not in payload and json.loads(payload)["spans"][0]["data"] == {"db.password": "[Filtered]"}
    assert query(inbox, "select message from inbox_feedback") == [("my [Filtered]",)]


def test_an_envelope_with_nothing_to_scrub_stays_as_it_came(inbox: InboxStore) -> None:
    outbox = OutboxStore(inbox.engine)
    body = build(LOCAL_DSN, [("event", json.dumps(error("'clean'")).encode())])
    outbox.add_many([{**local_row(body), "content_encoding": "identity"}])
    InboxFeeder(outbox, inbox).feed_once()
    assert outbox_bodies(inbox.engine) == [body]
    assert query(inbox, "select payload, envelope_id, item_index from inbox_event") == [("", 1, 0)]


def test_a_rejected_row_keeps_its_reason_not_its_body(inbox: InboxStore, caplog: pytest.LogCaptureFixture) -> None:
    outbox = OutboxStore(inbox.engine)
    broken = build(LOCAL_DSN, [("event", b'{"extra": {"password": "rejected-pass-1"}, ')])  # cut short
    unknown = build(None, [("event", json.dumps({"extra": {"password": "rejected-pass-2"}}).encode())])
    outbox.add_many([local_row(broken), local_row(unknown, dsn="http://nobody@localhost/99")])
    with caplog.at_level(logging.WARNING):
        InboxFeeder(outbox, inbox).feed_once()
    assert [status for status, _ in statuses(inbox.engine)] == ["rejected", "rejected"]
    assert outbox_bodies(inbox.engine) == [b"", b""]
    assert query(inbox, "select size from outbox") == [(0,), (0,)]
    secrets = ["rejected-pass-1", "rejected-pass-2"]
    assert found(secrets, caplog.text.encode()) == found(secrets, str(statuses(inbox.engine)).encode()) == []
    # (the rows were inserted raw: the files hold the secrets by the test's own insert, see above)


def test_a_project_that_does_not_scrub_keeps_everything_as_sent(inbox: InboxStore) -> None:
    store = InboxStore(inbox.engine, scrubbing_of=lambda project_id: ScrubbingSettings(scrub_data=False))
    outbox = OutboxStore(inbox.engine)
    body = every_item("s2")
    outbox.add_many([local_row(body)])
    InboxFeeder(outbox, store).feed_once()
    assert outbox_bodies(inbox.engine) == [body]
    assert query(inbox, "select body from inbox_log") == [(f"paid with {CARD}",)]


def test_every_sample_is_kept_scrubbed_with_its_secret_in_no_row(inbox: InboxStore) -> None:
    """The sample events, each with a secret of its own added, through the outbox and the feeder
    (the inbound filters off: two samples come from browsers the legacy-browser filter drops). The
    rows are inserted raw: the rewritten rows and the inbox hold no secret, the files do (see above)."""
    ProjectOptionsStore(inbox.engine).set_filters(1, NO_FILTERS)
    outbox = OutboxStore(inbox.engine)
    samples = []
    for number, path in enumerate(SAMPLE_PATHS):
        sample = json.loads(path.read_text())
        extra = sample.get("extra") if isinstance(sample.get("extra"), dict) else {}
        sample = {**sample, "event_id": uuid.uuid4().hex, "extra": {**extra, "db_password": f"sample-secret-{number}"}}
        samples.append(sample)
    outbox.add_many([local_row(build(LOCAL_DSN, [("event", json.dumps(sample).encode())])) for sample in samples])
    while InboxFeeder(outbox, inbox).feed_once():
        pass
    reader = InboxReader(inbox.engine)
    for sample in samples:
        expected = scrub(sample, ScrubbingSettings())
        fill_from_user_agent(expected)  # after scrubbing, as ingest does (a User-Agent is no secret)
        assert reader.event(sample["event_id"])["event"] == expected
    assert [body for body in outbox_bodies(inbox.engine) if b"sample-secret-" in body] == []
    assert query(inbox, "select count(*) from inbox_event") == [(len(samples),)]


def test_a_filtered_event_leaves_nothing_of_itself_in_its_row(inbox: InboxStore) -> None:
    """An event an inbound filter drops (here a crawler's, by the default filters) is kept nowhere by
    the feeder: not as an event, and not in its envelope's outbox row (inserted raw), which keeps the
    item's type alone; the feedback beside it is kept, scrubbed or not, in the row."""
    body = build(LOCAL_DSN, [("event", json.dumps(CRAWLER_EVENT).encode()),
                             ("feedback", b'{"contexts": {"feedback": {"message": "kept-marker"}}}')])
    outbox = OutboxStore(inbox.engine)
    outbox.add_many([local_row(body)])
    InboxFeeder(outbox, inbox).feed_once()
    [row] = outbox_bodies(inbox.engine)
    assert CRAWLED.encode() not in row and b"kept-marker" in row
    assert [item.type for item in envelope.parse(row, 1 << 20).items] == ["event", "feedback"]
    assert query(inbox, "select count(*) from inbox_event") == [(0,)]
