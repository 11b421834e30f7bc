"""Sentry's security endpoint over ASGI, into a real inbox: each body form becomes issues titled
and grouped as Sentry does, refusals say why and keep nothing, and the reports have a budget of
their own."""

from __future__ import annotations

import dataclasses
import json

import httpx
import pytest
import sqlalchemy

from app.inbox.reading import InboxReader
from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from app.ingest.security_reports import MAX_BODY_BYTES, SecurityReports
from app.ingest.store import InboxStore
from app.settings import Settings
from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.asgi import respond
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel
from tests.factories import error, query, titles

pytestmark = pytest.mark.anyio

CHROME = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
KEY = {"sentry_key": "lookout"}


def violation(directive: str, blocked: str) -> dict:
    return {"type": "csp-violation", "url": "http://app.test/", "body": {
        "documentURL": "http://app.test/", "blockedURL": blocked, "effectiveDirective": directive,
        "originalPolicy": "default-src 'self'", "disposition": "report"}}


async def not_found(scope, receive, send) -> None:  # ASGI
    await respond(send, 404, b'{"detail":"Not Found"}')


@pytest.fixture
async def security(engine: sqlalchemy.Engine, inbox: InboxStore):
    settings = dataclasses.replace(Settings.from_env({}), security_reports_per_min_per_key=3)
    tunnel = Tunnel(settings, OutboxStore(engine), RateLimits(), TunnelStats())
    ingest = Ingest(tunnel, inbox)
    yield SecurityReports(ingest)
    await tunnel.writer.close()


def http(security: SecurityReports) -> httpx.AsyncClient:
    app = security.asgi(security.ingest.asgi(not_found))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://lookout.test")


def fed(security: SecurityReports) -> None:
    InboxFeeder(security.tunnel.store, security.ingest.inbox).feed_once()


async def test_a_csp_level_2_report_becomes_an_issue_titled_as_sentry_titles_it(security: SecurityReports) -> None:
    report = {"csp-report": {"document-uri": "http://app.test/page", "violated-directive": "img-src 'self'",
                             "effective-directive": "img-src", "blocked-uri": "https://cdn.test:8443/a.png"}}
    async with http(security) as client:
        answer = await client.post("/api/1/security/", json=report,
                                   params={**KEY, "sentry_environment": "staging", "sentry_release": "shop@1.2"},
                                   headers={"Content-Type": "application/csp-report", "User-Agent": CHROME,
                                            "Origin": "http://app.test"})
    assert answer.status_code == 200, answer.text
    assert answer.headers["access-control-allow-origin"] == "*"
    fed(security)
    event = InboxReader(security.ingest.inbox.engine).event(answer.json()["id"])["event"]
    assert event["logentry"] == {"formatted": "Blocked 'image' from 'cdn.test:8443'"}
    assert (event["environment"], event["release"]) == ("staging", "shop@1.2")
    assert event["contexts"]["browser"]["name"] == "Chrome"  # from the report request's User-Agent
    assert query(security.ingest.inbox, "select title, culprit from inbox_issue") == [
        ("Blocked 'image' from 'cdn.test:8443'", "img-src 'self'")]


async def test_a_batch_groups_by_directive_and_blocked_host(security: SecurityReports) -> None:
    security.budget.per_minute = 0  # no budget: this test counts issues
    batch = [violation("img-src", "https://cdn.test/a.png"), violation("img-src", "https://cdn.test/b.png"),
             violation("script-src-elem", "inline"), {"type": "deprecation", "body": {"id": "old-api"}},
             violation("img-src", "https://other.test/a.png"), violation("script-src-elem", "inline")]
    async with http(security) as client:
        answer = await client.post("/api/1/security/", params=KEY, content=json.dumps(batch),
                                   headers={"Content-Type": "application/reports+json"})
    assert answer.status_code == 200, answer.text
    fed(security)
    counted = query(security.ingest.inbox, "select title, event_count from inbox_issue order by id")
    assert counted == [("Blocked 'image' from 'cdn.test'", 2), ("Blocked 'script' from 'inline:'", 2),
                       ("Blocked 'image' from 'other.test'", 1)]


async def test_expect_ct_and_hpkp_reports_are_kept(security: SecurityReports) -> None:
    async with http(security) as client:
        for content_type, report in [
            ("application/expect-ct-report+json", {"expect-ct-report": {"hostname": "www.example.test", "port": 443}}),
            ("application/json", {"hostname": "www.example.test", "known-pins": ['pin-sha256="x"']}),
        ]:
            answer = await client.post("/api/1/security/", params=KEY, json=report, headers={"Content-Type": content_type})
            assert answer.status_code == 200, answer.text
    fed(security)
    assert titles(security.ingest.inbox) == ["Expect-CT failed for 'www.example.test'",
                                             "Public key pinning validation failed for 'www.example.test'"]


REFUSALS = [  # (query, Content-Type, body, status, what the sentence says); one database for them all
    (KEY, "text/plain", b"{}", 415, "Content-Type is 'text/plain'"),
    (None, "application/csp-report", b"{}", 401, "No sentry_key"),
    ({"sentry_key": "guess"}, "application/csp-report", b"{}", 403, "has no key 'guess'"),
    (KEY, "application/csp-report", b"{oops", 400, "not readable"),
    (KEY, "application/csp-report", b'{"csp-report": {"effective-directive": "x"}}', 400, "names no directive"),
    (KEY, "application/reports+json", json.dumps([violation("img-src", "https://a.test/")] * 101).encode(), 413,
     "the limit is 100"),
    (KEY, "application/reports+json", b" " * (MAX_BODY_BYTES + 1), 413, f"limit is {MAX_BODY_BYTES} bytes"),
]


async def test_refusals_say_why_and_keep_nothing(security: SecurityReports) -> None:
    async with http(security) as client:
        for params, content_type, body, status, complaint in REFUSALS:
            answer = await client.post("/api/1/security/", params=params, content=body,
                                       headers={"Content-Type": content_type})
            assert answer.status_code == status and complaint in answer.json()["detail"], answer.text
            assert answer.headers["access-control-allow-origin"] == "*"
    assert security.tunnel.store.depth() == {}


async def test_reports_have_a_budget_of_their_own(security: SecurityReports) -> None:
    """3 a minute here: a batch of 4 is let in (the bucket goes below zero), the next is refused
    with Sentry's headers for the `security` category, and the key's errors still go in."""
    headers = {"Content-Type": "application/reports+json"}
    async with http(security) as client:
        first = await client.post("/api/1/security/", params=KEY, headers=headers,
                                  content=json.dumps([violation("img-src", "https://a.test/")] * 4))
        refused = await client.post("/api/1/security/", params=KEY, headers=headers,
                                    content=json.dumps([violation("img-src", "https://a.test/")]))
        event = error("'still taken'")
        envelope = await client.post("/api/1/envelope/", params=KEY,
                                     content=build(None, [("event", json.dumps(event).encode())], event_id=event["event_id"]))
    assert first.status_code == 200 and refused.status_code == 429, refused.text
    assert "3 security reports a minute" in refused.json()["detail"]
    assert refused.headers["x-sentry-rate-limits"] == f"{refused.headers['retry-after']}:security:key"
    assert envelope.status_code == 200


async def test_other_methods_and_sentry_mode(security: SecurityReports) -> None:
    async with http(security) as client:
        assert (await client.get("/api/1/security/")).status_code == 405
        preflight = await client.options("/api/1/security/")
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
        security.settings = dataclasses.replace(security.settings, dsn=Dsn.parse("https://k@sentry.example.org/5"))
        answer = await client.post("/api/1/security/", params=KEY, json={}, headers={"Content-Type": "application/json"})
    assert answer.status_code == 404 and "forwards to Sentry" in answer.json()["detail"]
