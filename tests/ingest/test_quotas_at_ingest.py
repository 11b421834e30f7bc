"""Quotas at the real endpoints (app/ingest/quotas.py through the tunnel's `admit`), on a SQLite file:
Sentry's /envelope/, /store/ and /security/ and the tunnel's path into the inbox answer 429 with Retry-After and
X-Sentry-Rate-Limits past a quota, store nothing of what they refused and lose nothing accepted before;
the real sentry-sdk, posting to the endpoint on loopback, stops sending for the window it was given."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path

import anyio.to_thread
import httpx
import pytest
import sentry_sdk

from app.ingest.endpoints import Ingest
from app.ingest.quotas import Quotas
from app.ingest.security_reports import SecurityReports
from app.ingest.store import InboxStore
from app.projects.options_store import ProjectOptionsStore
from app.projects.quota_options import QuotaOptions
from app.settings import Settings
from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel
from tests.environment import LOCAL_DSN
from tests.factories import error
from tests.ingest.helpers import Clock, http, in_inbox, not_found, served, sqlite_inbox

pytestmark = pytest.mark.anyio
HOUR = 3600 * 470_000
KEY = {"sentry_key": "lookout"}
RATE_LIMITS = "50:error;default;security:project:project_quota"


@pytest.fixture
async def ingest(tmp_path: Path) -> AsyncIterator[Ingest]:
    """The endpoints and the tunnel in local mode, project 1 limited to 2 events a minute, 10 s into a minute."""
    engine = sqlite_inbox(tmp_path)
    ProjectOptionsStore(engine).set_quotas(1, QuotaOptions(per_minute=2))
    settings = Settings.from_env({})
    settings.settle_local_dsn(Dsn.parse(LOCAL_DSN))
    tunnel = Tunnel(settings, OutboxStore(engine), RateLimits(), TunnelStats())
    tunnel.admit = Quotas(engine, Clock(HOUR + 10)).admit
    made = Ingest(tunnel, InboxStore(engine))
    yield made
    await tunnel.writer.close()


def an_event(kind: str = "event") -> tuple[str, bytes]:
    event = error("'quota'")
    payload = json.dumps(event if kind == "event" else {**event, "type": "transaction"}).encode()
    return event["event_id"], build(None, [(kind, payload)], event_id=event["event_id"])


async def test_past_the_quota_each_path_answers_429_and_keeps_what_it_took(ingest: Ingest) -> None:
    async with http(ingest) as client:
        kept = []
        for _ in range(2):
            event_id, body = an_event()
            assert (await client.post("/api/1/envelope/", content=body, params=KEY)).status_code == 200
            kept.append(event_id)
        refused_id, body = an_event()
        answers = [
            await client.post("/api/1/envelope/", content=body, params=KEY),
            await client.post("/api/1/store/", content=json.dumps(error("'stored'")), params=KEY),
        ]
        csp = {"csp-report": {"document-uri": "http://app.test/", "effective-directive": "img-src",
                              "violated-directive": "img-src 'self'", "blocked-uri": "http://cdn.test/a.png"}}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=SecurityReports(ingest).asgi(ingest.asgi(not_found))),
                                     base_url="http://lookout.test") as browser:
            answers.append(await browser.post("/api/1/security/", json=csp, params=KEY,
                                              headers={"Content-Type": "application/csp-report"}))
        tunnel_body = build(LOCAL_DSN, [("event", json.dumps(error("'tunnel'")).encode())])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=ingest.tunnel.asgi()),
                                     base_url="http://lookout.test") as browser:
            answers.append(await browser.post(ingest.settings.tunnel_path, content=tunnel_body))
        _, transaction = an_event("transaction")
        assert (await client.post("/api/1/envelope/", content=transaction, params=KEY)).status_code == 200
    for answer in answers:
        assert answer.status_code == 429, answer.text
        assert answer.headers["retry-after"] == "50" and answer.headers["x-sentry-rate-limits"] == RATE_LIMITS
        assert answer.json()["detail"] == "Project 1 takes at most 2 events a minute; try again in 50 s."
    assert ingest.tunnel.stats.rejected["over_quota"] == 4
    assert all(in_inbox(ingest, event_id) is not None for event_id in kept)  # nothing taken before is lost
    assert in_inbox(ingest, refused_id) is None


async def test_the_real_sentry_sdk_stops_sending_for_the_window(ingest: Ingest, sentry_init: Callable[..., None]) -> None:
    async with served(ingest) as port:
        sentry_init(dsn=f"http://lookout@127.0.0.1:{port}/1", default_integrations=False, send_client_reports=False)

        def send(message: str) -> None:
            sentry_sdk.capture_message(message)
            sentry_sdk.flush(timeout=10)

        for message in ("one", "two", "three"):  # the third is over the quota
            await anyio.to_thread.run_sync(send, message)
        assert (ingest.tunnel.stats.accepted, ingest.tunnel.stats.rejected["over_quota"]) == (2, 1)
        transport = sentry_sdk.get_client().transport
        until = transport._disabled_until["error"]  # type: ignore[union-attr]  # the SDK's own rate-limit state
        left = (until - datetime.now(UTC)).total_seconds()
        assert 0 < left <= 50  # the window's 50 s, counted from when it answered
        for message in ("four", "five"):
            await anyio.to_thread.run_sync(send, message)
        assert (ingest.tunnel.stats.accepted, ingest.tunnel.stats.rejected["over_quota"]) == (2, 1)  # not sent
