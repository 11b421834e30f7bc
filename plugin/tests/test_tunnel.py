"""The tunnel route over ASGI, against a real SQLite outbox and (where forwarding) a real upstream."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import json

import httpx
import pytest
import sqlalchemy

from plugin_support.envelopes import build, error_event
from plugin_support.helpers import accepted, sentry_settings, until
from plugin_support.pipeline import rows
from plugin_support.sql_log import outbox_depth_queries
from plugin_support.upstream import Upstream

pytestmark = pytest.mark.anyio


async def test_accepted_envelope_is_committed_before_the_answer(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    body = error_event(str(pipeline.settings.dsn))
    response = await pipeline.post(body)
    assert response.status_code == 200
    assert response.json()["id"] == json.loads(body.split(b"\n")[0])["event_id"]
    [row] = rows(pipeline)
    assert (row["body"], row["status"], row["dsn"], row["categories"]) == (
        body, "pending", str(pipeline.settings.dsn), "error",
    )
    assert pipeline.stats.accepted == 1


@pytest.mark.parametrize(
    "foreign",
    [
        "http://public@evil.example:{port}/42",  # host
        "http://public@127.0.0.1:{port}/43",  # project
        "http://other@127.0.0.1:{port}/42",  # key
        "http://public@127.0.0.1:1/42",  # port
        "https://public@127.0.0.1:{port}/42",  # scheme
        "http://public@127.0.0.1:{port}/prefix/42",  # path prefix
        "not a dsn",
        None,  # no dsn at all
    ],
)
async def test_foreign_dsn_is_forbidden_and_nothing_leaves(make_pipeline, upstream: Upstream, foreign) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream))
    dsn = foreign.format(port=upstream.port) if foreign else None
    response = await pipeline.post(error_event(dsn))
    assert response.status_code == 403
    assert "DSN" in response.json()["detail"]
    await asyncio.sleep(0.3)  # give a (wrongly) woken forwarder time to send
    assert rows(pipeline) == [] and upstream.received == []
    assert pipeline.stats.rejected["forbidden_dsn"] == 1


async def test_extra_allowed_dsns_pass(make_pipeline, upstream: Upstream) -> None:
    from reflex_lookout.dsn import Dsn

    other = Dsn.parse(f"http://second@127.0.0.1:{upstream.port}/7")
    pipeline = await make_pipeline(sentry_settings(upstream, extra_tunnel_dsns=(other,)))
    assert (await pipeline.post(error_event(str(other)))).status_code == 200
    [received] = await accepted(upstream, 1)
    assert received.path == "/api/7/envelope/"
    assert "sentry_key=second" in received.headers["x-sentry-auth"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"", 400, ""),
        (b"not json\n", 400, ""),
        (b'{"dsn": "{dsn}"}\n{"type": "event", "length": 99}\nshort', 400, ""),
        (b'{"dsn": "x"}\r\n{"type": "event"}\r\n{}\r\n', None, ""),  # decided by the parser's CRLF rule
    ],
)
async def test_malformed_envelopes_are_400_and_nothing_is_stored(make_pipeline, upstream, body, status, words) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    response = await pipeline.post(body.replace(b"{dsn}", str(pipeline.settings.dsn).encode()))
    assert response.status_code in ({status} if status else {400, 403})
    assert response.json()["detail"].endswith(".")
    assert rows(pipeline) == []


async def test_gzip_body_is_stored_and_forwarded_as_received(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream))
    compressed = gzip.compress(error_event(str(pipeline.settings.dsn)))
    response = await pipeline.post(compressed, **{"Content-Encoding": "gzip"})
    assert response.status_code == 200
    [received] = await accepted(upstream, 1)
    assert received.body == compressed
    assert received.headers["content-encoding"] == "gzip"
    assert received.headers["content-type"] == "application/x-sentry-envelope"
    assert received.path == "/api/42/envelope/"
    assert received.headers["x-sentry-auth"].startswith("Sentry sentry_version=7, sentry_key=public")


async def test_unsupported_encoding_is_415(make_pipeline, upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    response = await pipeline.post(b"xx", **{"Content-Encoding": "compress"})
    assert response.status_code == 415 and rows(pipeline) == []


async def test_caps_give_413(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(
        sentry_settings(upstream, max_request_bytes=4096, max_item_bytes=1024, max_envelope_bytes=8192), forward=False
    )
    dsn = str(pipeline.settings.dsn)
    too_long = build(dsn, [("attachment", b"x" * 5000)])
    assert (await pipeline.post(too_long)).status_code == 413  # request cap
    big_event = build(dsn, [("event", b"{" + b" " * 2000 + b"}")])
    assert (await pipeline.post(big_event)).status_code == 413  # item cap
    inflates = gzip.compress(build(dsn, [("attachment", b"\0" * 20000)]))
    assert len(inflates) < 4096
    assert (await pipeline.post(inflates, **{"Content-Encoding": "gzip"})).status_code == 413  # envelope cap
    assert (await pipeline.post(build(dsn, [("attachment", b"\xff\n\x00" * 300)]))).status_code == 200
    assert len(rows(pipeline)) == 1
    assert pipeline.stats.rejected["too_large"] == 3


async def test_full_outbox_answers_503_with_retry_after(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream, outbox_max_bytes=1500), forward=False)
    pipeline.store.wal_bytes = lambda: 0  # envelope bytes only here; test_outbox counts the WAL
    body = error_event(str(pipeline.settings.dsn), message="m" * 300)
    statuses = [(await pipeline.post(body)).status_code for _ in range(6)]
    assert statuses[0] == 200 and statuses[-1] == 503
    full = await pipeline.post(body)
    assert full.headers["retry-after"].isdigit() and "full" in full.json()["detail"]
    assert sum(r["size"] for r in rows(pipeline)) <= 1500


async def test_upstream_rate_limit_reaches_the_sdk(make_pipeline, upstream: Upstream) -> None:
    upstream.respond(429, {"Retry-After": "60", "X-Sentry-Rate-Limits": "60:error:key:quota"})
    pipeline = await make_pipeline(sentry_settings(upstream))
    dsn = str(pipeline.settings.dsn)
    assert (await pipeline.post(error_event(dsn))).status_code == 200
    await until(lambda: len(upstream.received) >= 1)
    for _ in range(50):
        if pipeline.limits.snapshot():
            break
        await asyncio.sleep(0.05)
    limited = await pipeline.post(error_event(dsn))
    assert limited.status_code == 429
    assert limited.headers["x-sentry-rate-limits"].startswith(("60:error:key", "59:error:key"))
    assert int(limited.headers["retry-after"]) in (59, 60)
    # Another category still passes, and learns the active limits from the headers.
    passed = await pipeline.post(build(dsn, [("transaction", b"{}")]))
    assert passed.status_code == 200 and "error" in passed.headers["x-sentry-rate-limits"]
    assert pipeline.stats.rate_limited == 1
    # The rate-limited envelope stays in the outbox; nothing was lost.
    assert len(rows(pipeline)) == 2


async def test_origins(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(
        sentry_settings(upstream, tunnel_origins=("https://app.example",)), forward=False
    )
    body = error_event(str(pipeline.settings.dsn))
    assert (await pipeline.post(body, Origin="http://lookout.test")).status_code == 200  # same origin
    allowed = await pipeline.post(body, Origin="https://app.example")
    assert allowed.status_code == 200 and allowed.headers["access-control-allow-origin"] == "https://app.example"
    assert (await pipeline.post(body, Origin="https://evil.example")).status_code == 403
    preflight = await pipeline.client.options(pipeline.settings.tunnel_path, headers={"Origin": "https://app.example"})
    assert preflight.status_code == 204 and "POST" in preflight.headers["access-control-allow-methods"]
    foreign = await pipeline.client.options(pipeline.settings.tunnel_path, headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
    assert len(rows(pipeline)) == 2


# The stats from this machine: the test client's peer is 127.0.0.1, and Host must name this machine too.
THIS_MACHINE = {"Host": "localhost:8000"}
STATS_TOKEN = "s" * 32


def stats_client(pipeline, base_url: str, peer: str) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=pipeline.tunnel.asgi(), client=(peer, 50000))
    return httpx.AsyncClient(transport=transport, base_url=base_url)


async def test_stats_endpoint(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    await pipeline.post(error_event(str(pipeline.settings.dsn)))
    await pipeline.post(b"garbage")
    answer = await pipeline.client.get(pipeline.settings.tunnel_path + "/stats", headers=THIS_MACHINE)
    stats = answer.json()
    assert stats["mode"] == "sentry" and stats["destination"] == f"127.0.0.1:{upstream.port}"
    assert stats["accepted"] == 1 and stats["rejected"] == {"malformed": 1}
    assert stats["outbox"]["pending"]["envelopes"] == 1
    assert not [name for name in answer.headers if name.startswith("access-control-")]


async def test_the_stats_are_refused_to_strangers_rebound_names_and_other_sites_pages(make_pipeline, upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    path = pipeline.settings.tunnel_path + "/stats"
    async with stats_client(pipeline, "http://lookout.example.com", "203.0.113.9") as elsewhere:
        with outbox_depth_queries(pipeline.store.engine) as queries:
            refused = {
                "another machine": await elsewhere.get(path),
                "another machine, through a proxy here": await pipeline.client.get(
                    path, headers={**THIS_MACHINE, "X-Forwarded-For": "203.0.113.9"}),
                "a DNS-rebound name": await pipeline.client.get(path, headers={"Host": "evil.example:8000"}),
                "another site's page": await pipeline.client.get(
                    path, headers={**THIS_MACHINE, "Origin": "https://evil.example"}),
                "a page of another port": await pipeline.client.get(
                    path, headers={**THIS_MACHINE, "Origin": "http://localhost:9999"}),
            }
        assert queries == []  # a refusal costs no query
    for who, answer in refused.items():
        assert answer.status_code == (403 if "page" in who else 401), who
        assert "accepted" not in answer.text and "destination" not in answer.text, who
        assert not [name for name in answer.headers if name.startswith("access-control-")], who
    own_page = await pipeline.client.get(path, headers={**THIS_MACHINE, "Origin": "http://localhost:8000"})
    assert own_page.status_code == 200 and "accepted" in own_page.json()


async def test_the_stats_token_lets_another_machine_read_them(make_pipeline, upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream, tunnel_stats_token=STATS_TOKEN), forward=False)
    path = pipeline.settings.tunnel_path + "/stats"
    async with stats_client(pipeline, "https://lookout.example.com", "203.0.113.9") as elsewhere:
        assert (await elsewhere.get(path, headers={"Authorization": f"bearer {STATS_TOKEN}"})).status_code == 200
        wrong = await elsewhere.get(path, headers={"Authorization": f"Bearer {STATS_TOKEN[:-1]}"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        page = await elsewhere.get(path, headers={"Authorization": f"Bearer {STATS_TOKEN}", "Origin": "https://evil.example"})
        assert page.status_code == 403


async def test_the_outbox_depth_is_read_at_most_once_a_second(make_pipeline, upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    path = pipeline.settings.tunnel_path + "/stats"
    now = [1000.0]
    pipeline.tunnel.clock = lambda: now[0]
    with outbox_depth_queries(pipeline.store.engine) as queries:
        first = [await pipeline.client.get(path, headers=THIS_MACHINE) for _ in range(5)]
        together = await asyncio.gather(*(pipeline.client.get(path, headers=THIS_MACHINE) for _ in range(5)))
        assert len(queries) == 1
        assert all(a.json()["outbox"]["pending"]["envelopes"] == 0 for a in [*first, *together])

        await pipeline.post(error_event(str(pipeline.settings.dsn)))
        now[0] += 0.9
        within = (await pipeline.client.get(path, headers=THIS_MACHINE)).json()
        assert within["accepted"] == 1 and within["outbox"]["pending"]["envelopes"] == 0  # counters live, depth kept
        assert len(queries) == 1
        now[0] += 0.1
        later = (await pipeline.client.get(path, headers=THIS_MACHINE)).json()
        assert later["outbox"]["pending"]["envelopes"] == 1 and len(queries) == 2
    # The home page reads the same snapshot (app/pages/home.py), under the same limit.
    with outbox_depth_queries(pipeline.store.engine) as queries:
        assert pipeline.tunnel.snapshot()["outbox"]["pending"]["envelopes"] == 1 and queries == []


async def test_with_the_stats_off_their_path_is_not_the_tunnels(make_pipeline, upstream) -> None:
    pipeline = await make_pipeline(dataclasses.replace(sentry_settings(upstream), tunnel_stats=False), forward=False)
    answer = await pipeline.client.get(pipeline.settings.tunnel_path + "/stats", headers=THIS_MACHINE)
    assert answer.status_code == 404 and "accepted" not in answer.text


async def test_a_store_failure_is_503_not_a_crash(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    with pipeline.store.engine.begin() as connection:
        connection.execute(sqlalchemy.text("alter table outbox rename to outbox_gone"))
    response = await pipeline.post(error_event(str(pipeline.settings.dsn)))
    assert response.status_code == 503 and response.headers["retry-after"].isdigit()
    assert "could not be stored" in response.json()["detail"]
    assert pipeline.stats.rejected["store_failed"] == 1 and pipeline.stats.accepted == 0


async def test_refusals_carry_no_cors_grant_for_foreign_origins(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    refused = await pipeline.post(b"garbage", Origin="https://evil.example")
    assert refused.status_code == 403 and "access-control-allow-origin" not in refused.headers


# Issue 13: nothing a client sends freezes or fills the tunnel -------------------------------------


async def test_the_dsn_is_checked_on_the_header_line_before_the_body_is_decoded(make_pipeline, upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    foreign = f"http://public@evil.example:{upstream.port}/42"
    whole = gzip.compress(build(foreign, [("attachment", b"a" * 100_000)]))
    broken = whole[: len(whole) // 2]  # a body whose end is corrupt: only its first line is read
    response = await pipeline.post(broken, **{"Content-Encoding": "gzip"})
    assert response.status_code == 403 and "DSN" in response.json()["detail"]
    allowed = gzip.compress(build(str(pipeline.settings.dsn), [("attachment", b"a" * 100_000)]))
    assert (await pipeline.post(allowed[: len(allowed) // 2], **{"Content-Encoding": "gzip"})).status_code == 400
    assert rows(pipeline) == []


async def test_an_envelope_of_more_than_1000_items_is_413(make_pipeline, upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    dsn = str(pipeline.settings.dsn)
    refused = await pipeline.post(build(dsn, [("attachment", b"x")] * 1001))
    assert refused.status_code == 413 and "1000 items" in refused.json()["detail"]
    assert (await pipeline.post(build(dsn, [("attachment", b"x")] * 1000))).status_code == 200
    assert len(rows(pipeline)) == 1 and pipeline.stats.rejected["too_large"] == 1


def log_batch(*bodies: str, item_count: int | None = None) -> tuple[dict[str, object], bytes]:
    payload = json.dumps({"items": [{"timestamp": 1.0, "level": "info", "body": b} for b in bodies]}).encode()
    count = len(bodies) if item_count is None else item_count
    return {"type": "log", "length": len(payload), "item_count": count,
            "content_type": "application/vnd.sentry.items.log+json"}, payload


async def test_each_log_line_is_capped_whatever_item_count_says(make_pipeline, upstream) -> None:
    from plugin_support.envelopes import assemble

    pipeline = await make_pipeline(sentry_settings(upstream, max_item_bytes=1024), forward=False)
    header = {"dsn": str(pipeline.settings.dsn)}
    # One 5 KB line in a batch that claims 1000 lines: 5 bytes a line on average, but one line is 5 KB.
    refused = await pipeline.post(assemble(header, [log_batch("x" * 5000, item_count=1000)]))
    assert refused.status_code == 413
    assert "Record 1 of item 1" in refused.json()["detail"] and "1024-byte limit" in refused.json()["detail"]
    assert (await pipeline.post(assemble(header, [log_batch("short", "lines")]))).status_code == 200
    assert len(rows(pipeline)) == 1


async def test_a_log_item_holds_at_most_1000_lines(make_pipeline, upstream) -> None:
    from plugin_support.envelopes import assemble

    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    header = {"dsn": str(pipeline.settings.dsn)}
    for claimed in (1001, 1):  # the count is read from the records, not from the header
        refused = await pipeline.post(assemble(header, [log_batch(*["l"] * 1001, item_count=claimed)]))
        assert refused.status_code == 413 and "1000 records" in refused.json()["detail"], refused.text
    assert (await pipeline.post(assemble(header, [log_batch(*["l"] * 1000)]))).status_code == 200


async def test_a_client_past_its_rate_is_answered_429_with_retry_after(make_pipeline, upstream) -> None:
    body_size = len(error_event("http://public@127.0.0.1:1/42"))
    # A request is let in while the client's minute is not spent, then charged: 2.5 bodies' worth
    # lets three in (the third overdraws), and the fourth waits.
    settings = sentry_settings(upstream, ingest_bytes_per_min_per_client=5 * body_size // 2)
    pipeline = await make_pipeline(settings, forward=False)
    dsn = str(settings.dsn)
    statuses = [(await pipeline.post(error_event(dsn))).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    limited = await pipeline.post(error_event(dsn))
    assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
    assert "this client" in limited.json()["detail"]
    # Another client, behind the proxy on this machine, has a rate of its own.
    other = await pipeline.post(error_event(dsn), **{"X-Forwarded-For": "192.0.2.7"})
    assert other.status_code == 200
    assert len(rows(pipeline)) == 4 and pipeline.stats.rejected["too_many_requests"] == 2


async def test_each_dsn_has_a_rate_of_its_own(make_pipeline, upstream) -> None:
    from reflex_lookout.dsn import Dsn

    other = Dsn.parse(f"http://second@127.0.0.1:{upstream.port}/7")
    body_size = len(error_event(str(other)))
    settings = sentry_settings(upstream, extra_tunnel_dsns=(other,), ingest_bytes_per_min_per_key=3 * body_size // 2)
    pipeline = await make_pipeline(settings, forward=False)
    first = [(await pipeline.post(error_event(str(settings.dsn)))).status_code for _ in range(3)]
    assert first == [200, 200, 429]
    limited = await pipeline.post(error_event(str(settings.dsn)))
    assert "this DSN" in limited.json()["detail"] and limited.headers["retry-after"].isdigit()
    assert [(await pipeline.post(error_event(str(other)))).status_code for _ in range(2)] == [200, 200]
