"""The origin guard around a small real app: other sites' pages are refused, over HTTP and in the
websocket handshake, except on the tunnel and the ingest endpoints."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import aiohttp
import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route, WebSocketRoute
from starlette.testclient import TestClient, WebSocketDenialResponse
from starlette.websockets import WebSocket

from app.origin_guard import OriginGuard
from app.settings import SETTINGS
from tests.services import free_port, stop_group

EVIL = "https://evil.example"
ROOT = Path(__file__).resolve().parents[1]


async def answered(request: Request) -> JSONResponse:
    return JSONResponse({"path": request.url.path})


async def socket(websocket: WebSocket) -> None:
    await websocket.accept()
    await websocket.send_text("hello")
    await websocket.close()


INNER = Starlette(routes=[
    Route("/{path:path}", answered, methods=["GET", "POST", "OPTIONS"]),
    WebSocketRoute("/_event/", socket),
])


GUARDED = OriginGuard(INNER)  # served by granian below


def guarded() -> TestClient:
    return TestClient(OriginGuard(INNER), base_url="http://localhost:8000", client=("127.0.0.1", 5000))


@pytest.mark.parametrize("path", ["/api/inbox/issues", "/monitoring/stats", "/_event/", "/ping", "/issues",
                                  "/api/inbox/signin", "/api/x/envelope/"])
def test_another_sites_page_is_refused_with_a_sentence_and_no_cors_grant(path: str) -> None:
    refused = guarded().get(path, headers={"Origin": EVIL})
    assert refused.status_code == 403 and "other sites" in refused.json()["detail"]
    assert "access-control-allow-origin" not in refused.headers
    preflight = guarded().options(path, headers={"Origin": EVIL, "Access-Control-Request-Method": "GET"})
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers


@pytest.mark.parametrize("origin", [None, "http://localhost:8000", "http://localhost:3000", "http://127.0.0.1:3000"])
def test_the_apps_own_pages_and_programs_pass(origin: str | None) -> None:
    headers = {"Origin": origin} if origin else {}
    assert guarded().get("/api/inbox/issues", headers=headers).json() == {"path": "/api/inbox/issues"}


@pytest.mark.parametrize("path", [SETTINGS.tunnel_path, "/api/1/envelope/", "/api/42/store/", "/api/7/envelope",
                                  "/api/3/security/", "/api/0/organizations/lookout/issues/",
                                  "/api/0/projects/lookout/web/issues/"])
def test_the_tunnel_the_ingest_endpoints_and_sentrys_api_are_open_to_every_origin(path: str) -> None:
    assert guarded().post(path, headers={"Origin": EVIL}).json() == {"path": path}


def test_the_websocket_handshake_of_another_sites_page_is_refused() -> None:
    with pytest.raises(WebSocketDenialResponse) as denied:
        with guarded().websocket_connect("/_event/", headers={"Origin": EVIL}):
            pass
    assert denied.value.status_code == 403 and "other sites" in denied.value.json()["detail"]
    with guarded().websocket_connect("/_event/", headers={"Origin": "http://localhost:3000"}) as accepted:
        assert accepted.receive_text() == "hello"


def test_without_the_denial_extension_the_handshake_is_closed_before_it_is_accepted() -> None:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "websocket.connect"}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {"type": "websocket", "path": "/_event/", "client": ("127.0.0.1", 5000), "extensions": {},
             "headers": [(b"host", b"localhost:8000"), (b"origin", EVIL.encode())]}
    anyio.run(OriginGuard(INNER), scope, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}]


def test_the_socketio_polling_transport_is_refused_too() -> None:
    async def polled() -> httpx.Response:
        transport = httpx.ASGITransport(OriginGuard(INNER), client=("127.0.0.1", 5000))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8000") as http:
            return await http.get("/_event/", params={"EIO": "4", "transport": "polling"}, headers={"Origin": EVIL})

    assert anyio.run(polled).status_code == 403


def test_granian_refuses_the_handshake_of_another_sites_page() -> None:
    """The server the app runs on (granian), over real HTTP on loopback."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1", "--port", str(port),
         "tests.test_origin_guard:GUARDED"],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                httpx.get(f"http://localhost:{port}/ping", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)

        async def handshakes() -> dict[str, object]:
            found: dict[str, object] = {}
            async with aiohttp.ClientSession() as session:
                for origin in (EVIL, "http://localhost:3000"):
                    try:
                        async with session.ws_connect(f"http://localhost:{port}/_event/", headers={"Origin": origin}) as ws:
                            found[origin] = (await ws.receive()).data
                    except aiohttp.WSServerHandshakeError as refused:
                        found[origin] = refused.status
            return found

        assert anyio.run(handshakes) == {EVIL: 403, "http://localhost:3000": "hello"}
    finally:
        stop_group(server)
