"""`GET /monitoring/stats` in a host app: what `post_compile` adds (the real tunnel on the app's outbox
file), inside the layers Reflex puts around it (its CORS middleware, which grants every origin).

Off unless LOOKOUT_TUNNEL_STATS is on; then for this machine and the stats token's bearer, never for a
page of another site, and the outbox's depth read at most once a second however often it is asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from reflex.app import App
from starlette.applications import Starlette

from plugin_support.host_app import HostApp
from plugin_support.sql_log import outbox_depth_queries
from reflex_lookout import Monitoring, runtime
from reflex_lookout.tunnel import Tunnel

pytestmark = pytest.mark.anyio
DSN = "http://3f2a@127.0.0.1:3000/2"
TOKEN = "stats-token-0123456789abcdef"
STATS = "/monitoring/stats"
THIS_MACHINE = "http://localhost:3000"  # the peer is 127.0.0.1 (httpx's ASGI transport) and so is Host


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # as Reflex's backend runs


def envelope(dsn: str) -> bytes:
    event = {"event_id": "a" * 32, "message": "hello"}
    return b"\n".join([json.dumps({"event_id": "a" * 32, "dsn": dsn}).encode(),
                       json.dumps({"type": "event"}).encode(), json.dumps(event).encode()])


def host_backend(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, **env: str) -> tuple[Any, Tunnel]:
    """The ASGI app a host's backend serves, stacked as Reflex 0.10.1's `App.__call__` stacks it (the
    api_transformers around the app's own routes, all of it mounted under a Starlette app with Reflex's
    CORS middleware), and the tunnel in it."""
    for name in ("SENTRY_DSN", "LOOKOUT_OUTBOX_URL", "LOOKOUT_TUNNEL_STATS", "LOOKOUT_TUNNEL_STATS_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(runtime, "_current", None)
    monkeypatch.chdir(tmp_path)
    app = HostApp()
    Monitoring(dsn=DSN).post_compile(app=app)  # type: ignore[arg-type]  # the attributes it uses
    [transformer] = app.api_transformer
    top = Starlette()
    top.mount("", transformer(Starlette()))  # the app's own routes: none here, so 404
    App._add_cors(top)
    return top, transformer.__self__


def client(asgi: Any, base_url: str = THIS_MACHINE, peer: str = "127.0.0.1") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi, client=(peer, 50000)), base_url=base_url)


async def test_off_by_default_the_path_is_the_apps_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asgi, tunnel = host_backend(monkeypatch, tmp_path)
    async with client(asgi) as local:
        with outbox_depth_queries(tunnel.store.engine) as queries:
            answer = await local.get(STATS)
        assert answer.status_code == 404 and "accepted" not in answer.text
        assert queries == []
        assert (await local.post("/monitoring", content=envelope(DSN))).status_code == 200  # the tunnel itself works


async def test_on_this_machine_reads_them_and_nobody_else(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asgi, tunnel = host_backend(monkeypatch, tmp_path, LOOKOUT_TUNNEL_STATS="on")
    async with client(asgi) as local:
        await local.post("/monitoring", content=envelope(DSN))
        with outbox_depth_queries(tunnel.store.engine) as queries:
            refused = {
                "another machine": await client(asgi, "http://app.example.com", "203.0.113.9").get(STATS),
                "another machine, through a proxy here": await local.get(STATS, headers={"X-Forwarded-For": "203.0.113.9"}),
                "a rebound name": await client(asgi, "http://evil.example:3000").get(STATS),
                "another site's page": await local.get(STATS, headers={"Origin": "https://evil.example"}),
            }
            assert queries == []  # nothing refused costs a query
        for who, answer in refused.items():
            assert answer.status_code in (401, 403) and "accepted" not in answer.text, who
        assert refused["another site's page"].status_code == 403
        # Reflex's own CORS layer grants every origin around the tunnel; the refusal is all it can read.
        assert refused["another site's page"].json() == {"detail": "Pages of other sites may not read the tunnel's stats."}

        stats = await local.get(STATS)
        assert stats.status_code == 200 and stats.json()["accepted"] == 1
        assert stats.json()["outbox"]["pending"]["envelopes"] == 1
        assert stats.headers["cache-control"] == "no-store"
        assert not [name for name in stats.headers if name.startswith("access-control-")]
    async with client(tunnel.asgi()) as bare:  # the tunnel's own answer, without Reflex's CORS layer around it
        own_page = await bare.get(STATS, headers={"Origin": THIS_MACHINE})
        assert own_page.status_code == 200 and "accepted" in own_page.json()
        assert not [name for name in own_page.headers if name.startswith("access-control-")]


async def test_the_token_opens_them_to_another_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asgi, _ = host_backend(monkeypatch, tmp_path, LOOKOUT_TUNNEL_STATS="on", LOOKOUT_TUNNEL_STATS_TOKEN=TOKEN)
    async with client(asgi, "https://app.example.com", "203.0.113.9") as elsewhere:
        allowed = await elsewhere.get(STATS, headers={"Authorization": f"Bearer {TOKEN}"})
        assert allowed.status_code == 200 and "accepted" in allowed.json()
        wrong = await elsewhere.get(STATS, headers={"Authorization": f"Bearer {TOKEN}x"})
        assert wrong.status_code == 401 and wrong.headers["www-authenticate"] == "Bearer"
        from_a_page = await elsewhere.get(STATS, headers={"Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"})
        assert from_a_page.status_code == 403 and "accepted" not in from_a_page.text


async def test_repeated_calls_within_a_second_read_the_outbox_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asgi, tunnel = host_backend(monkeypatch, tmp_path, LOOKOUT_TUNNEL_STATS="on")
    async with client(asgi) as local:
        with outbox_depth_queries(tunnel.store.engine) as queries:
            answers = [await local.get(STATS) for _ in range(10)]
        assert [a.status_code for a in answers] == [200] * 10
        assert len(queries) == 1


def test_a_short_token_stops_the_start_without_showing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKOUT_TUNNEL_STATS_TOKEN", "short-secret")
    with pytest.raises(SystemExit) as stopped:
        Monitoring(dsn=DSN)
    assert "LOOKOUT_TUNNEL_STATS_TOKEN must be at least 16" in str(stopped.value)
    assert "short-secret" not in str(stopped.value)
    monkeypatch.setenv("LOOKOUT_TUNNEL_STATS_TOKEN", TOKEN)
    assert TOKEN not in repr(Monitoring(dsn=DSN).settings)
