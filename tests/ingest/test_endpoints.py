"""Sentry's ingest endpoints over ASGI: keys from the query, the auth header or the envelope,
the /store/ protocol, and clear refusals; what is accepted reaches the inbox."""

from __future__ import annotations

import dataclasses
import gzip
import json

import pytest
import sqlalchemy

from app.ingest.endpoints import Ingest
from app.ingest.store import InboxStore
from app.settings import Settings
from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel
from tests.factories import error
from tests.ingest.helpers import http, in_inbox

pytestmark = pytest.mark.anyio


async def test_an_envelope_with_the_key_in_the_query_or_header_or_envelope_is_kept(ingest: Ingest) -> None:
    async with http(ingest) as client:
        for how in ("query", "header", "envelope"):
            event = error(f"'{how}'")
            dsn = "http://lookout@lookout.example:3000/1" if how == "envelope" else None
            body = build(dsn, [("event", json.dumps(event).encode())], event_id=event["event_id"])
            answer = await client.post(
                "/api/1/envelope/", content=body,
                params={"sentry_key": "lookout"} if how == "query" else None,
                headers={"X-Sentry-Auth": "Sentry sentry_version=7, sentry_key=lookout, sentry_client=x/1"}
                if how == "header" else {},
            )
            assert answer.status_code == 200 and answer.json() == {"id": event["event_id"]}, answer.text
            assert answer.headers["access-control-allow-origin"] == "*"
            assert in_inbox(ingest, event["event_id"])["event"] == event


async def test_the_store_endpoint_takes_one_json_event_even_compressed(ingest: Ingest) -> None:
    event = error("'stored'")
    async with http(ingest) as client:
        answer = await client.post("/api/1/store/?sentry_key=lookout", content=gzip.compress(json.dumps(event).encode()),
                                   headers={"Content-Encoding": "gzip"})
    assert answer.status_code == 200 and answer.json() == {"id": event["event_id"]}
    assert in_inbox(ingest, event["event_id"])["event"] == event


@pytest.mark.parametrize(("path", "params", "body", "status", "complaint"), [
    ("/api/1/envelope/", None, build(None, [("event", b"{}")]), 401, "No sentry_key"),
    ("/api/1/envelope/", {"sentry_key": "guess"}, build(None, [("event", b"{}")]), 403, "has no key 'guess'"),
    ("/api/7/envelope/", {"sentry_key": "lookout"}, build(None, [("event", b"{}")]), 403, "Project 7"),
    ("/api/1/envelope/", {"sentry_key": "lookout"}, b"not an envelope", 400, "not valid JSON"),
    ("/api/1/store/", {"sentry_key": "lookout"}, b"[1, 2]", 400, "must be a JSON object"),
], ids=["no-key", "unknown-key", "unknown-project", "not-json", "store-not-an-object"])  # the bodies hold random event ids
async def test_refusals_say_why_and_keep_nothing(ingest: Ingest, path, params, body, status, complaint) -> None:
    async with http(ingest) as client:
        answer = await client.post(path, params=params, content=body)
    assert answer.status_code == status and complaint in answer.json()["detail"], answer.text
    assert ingest.tunnel.store.depth() == {}


async def test_other_methods_and_paths(ingest: Ingest) -> None:
    async with http(ingest) as client:
        assert (await client.get("/api/1/envelope/")).status_code == 405
        assert (await client.options("/api/1/envelope/")).status_code == 204
        assert (await client.post("/api/inbox/issues")).status_code == 404  # not ingest: handed on


async def test_with_a_sentry_dsn_there_is_no_inbox_to_ingest_into(ingest: Ingest) -> None:
    ingest.settings = dataclasses.replace(ingest.settings, dsn=Dsn.parse("https://k@sentry.example.org/5"))
    async with http(ingest) as client:
        answer = await client.post("/api/1/envelope/?sentry_key=lookout", content=build(None, [("event", b"{}")]))
    assert answer.status_code == 404 and "forwards to Sentry" in answer.json()["detail"]


async def test_an_unknown_encoding_is_refused_and_counted_like_the_tunnel_counts_it(ingest: Ingest) -> None:
    async with http(ingest) as client:
        answer = await client.post("/api/1/envelope/?sentry_key=lookout", content=b"x", headers={"Content-Encoding": "lzma"})
    assert answer.status_code == 415
    assert ingest.tunnel.stats.as_dict()["rejected"] == {"unsupported_encoding": 1}


# Issue 13: the key is checked first, the heavy work is bounded, and each key has a rate ------------


async def test_a_wrong_key_is_refused_before_the_body_is_decoded(ingest: Ingest) -> None:
    whole = gzip.compress(build(None, [("attachment", b"a" * 100_000)]))
    broken = whole[: len(whole) // 2]  # corrupt past its first line: decoding it all would say 400
    async with http(ingest) as client:
        for params in ({"sentry_key": "guess"}, None):
            answer = await client.post("/api/1/envelope/", params=params, content=broken, headers={"Content-Encoding": "gzip"})
            assert answer.status_code == (403 if params else 401), answer.text
        in_header = gzip.compress(build("http://guess@lookout.example/1", [("attachment", b"a" * 100_000)]))
        answer = await client.post("/api/1/envelope/", content=in_header[: len(in_header) // 2],
                                   headers={"Content-Encoding": "gzip"})
        assert answer.status_code == 403 and "has no key 'guess'" in answer.json()["detail"]


async def test_the_store_endpoint_refuses_a_deeply_nested_event_with_a_sentence(ingest: Ingest) -> None:
    async with http(ingest) as client:
        answer = await client.post("/api/1/store/?sentry_key=lookout", content=b"[" * 200_000 + b"]" * 200_000)
    assert answer.status_code in (400, 413) and answer.json()["detail"].endswith("."), answer.text
    assert ingest.tunnel.store.depth() == {}


async def test_the_store_endpoint_stops_decoding_past_the_item_cap(ingest: Ingest) -> None:
    event = json.dumps({"message": "m" * (ingest.settings.max_item_bytes + 10)}).encode()
    async with http(ingest) as client:
        answer = await client.post("/api/1/store/?sentry_key=lookout", content=gzip.compress(event),
                                   headers={"Content-Encoding": "gzip"})
    assert answer.status_code == 413 and "limit" in answer.json()["detail"]


async def test_each_project_key_has_a_rate_of_its_own(engine: sqlalchemy.Engine, inbox: InboxStore) -> None:
    second = Dsn.parse("http://second@localhost/2")
    inbox.ensure_project(second, "second")
    body = build(None, [("event", json.dumps(error("'rate'")).encode())])
    settings = dataclasses.replace(Settings.from_env({}), ingest_bytes_per_min_per_key=3 * len(body) // 2)
    tunnel = Tunnel(settings, OutboxStore(engine), RateLimits(), TunnelStats())
    try:
        async with http(Ingest(tunnel, inbox)) as client:
            statuses = [(await client.post("/api/1/envelope/?sentry_key=lookout", content=body)).status_code
                        for _ in range(3)]
            limited = await client.post("/api/1/envelope/?sentry_key=lookout", content=body)
            others = [(await client.post("/api/2/envelope/?sentry_key=second", content=body)).status_code
                      for _ in range(2)]
    finally:
        await tunnel.writer.close()
    assert statuses == [200, 200, 429] and others == [200, 200]
    assert limited.status_code == 429 and limited.headers["retry-after"].isdigit()
    assert "this DSN" in limited.json()["detail"]
