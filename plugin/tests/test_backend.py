"""What `post_compile` gives a host app's backend: the real tunnel in front of the app's own routes,
committing to the app's outbox file; the app's other paths untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy

from plugin_support.host_app import HostApp
from reflex_lookout import Monitoring, runtime

DSN = "http://3f2a@127.0.0.1:3000/2"


pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # as Reflex's backend runs


async def their_routes(scope: Any, receive: Any, send: Any) -> None:
    """The host's own backend: answers every path it gets with 299."""
    await send({"type": "http.response.start", "status": 299, "headers": []})
    await send({"type": "http.response.body", "body": scope["path"].encode()})


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> httpx.AsyncClient:
    monkeypatch.delenv("SENTRY_DSN", raising=False)
    monkeypatch.delenv("LOOKOUT_OUTBOX_URL", raising=False)
    monkeypatch.setattr(runtime, "_current", None)
    monkeypatch.chdir(tmp_path)
    app = HostApp()
    Monitoring(dsn=DSN).post_compile(app=app)  # type: ignore[arg-type]  # the attributes it uses
    [tunnel] = app.api_transformer
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=tunnel(their_routes)), base_url="http://app.test")


def envelope(dsn: str) -> bytes:
    event = {"event_id": "a" * 32, "message": "hello"}
    return b"\n".join([json.dumps({"event_id": "a" * 32, "dsn": dsn}).encode(),
                       json.dumps({"type": "event"}).encode(), json.dumps(event).encode()])


async def test_an_envelope_for_the_dsn_is_committed_to_the_apps_outbox(backend: httpx.AsyncClient, tmp_path: Path) -> None:
    answer = await backend.post("/monitoring", content=envelope(DSN))
    assert answer.status_code == 200 and answer.json() == {"id": "a" * 32}
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / '.lookout' / 'outbox.db'}")
    with engine.connect() as connection:
        rows = connection.execute(sqlalchemy.text("select dsn, status, event_id from outbox")).all()
    assert rows == [(DSN, "pending", "a" * 32)]


async def test_another_dsn_is_refused_with_a_sentence(backend: httpx.AsyncClient) -> None:
    answer = await backend.post("/monitoring", content=envelope("http://other@127.0.0.1:3000/9"))
    assert answer.status_code == 403 and "not one this tunnel forwards for" in answer.text


async def test_the_apps_own_paths_reach_the_app(backend: httpx.AsyncClient) -> None:
    answer = await backend.get("/api/things")
    assert (answer.status_code, answer.text) == (299, "/api/things")
    assert (await backend.get("/monitoring")).status_code == 405
