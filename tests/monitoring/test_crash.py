"""A tunnel process killed with SIGKILL under load loses nothing it answered 200 for."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from plugin_support.envelopes import error_event
from plugin_support.helpers import until
from plugin_support.upstream import Upstream
from tests.e2e.app_server import ROOT
from tests.services import free_port

pytestmark = pytest.mark.anyio


def start_tunnel(port: int, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "app.standalone.tunnel:app", "--host", "127.0.0.1",
         "--port", str(port), "--no-access-log"],
        cwd=ROOT, env={**os.environ, **env}, stdout=log.open("ab"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )


async def wait_listening(url: str, process: subprocess.Popen[bytes]) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(200):
            assert process.poll() is None, "the tunnel process exited"
            try:
                await client.get(url + "/monitoring/stats")
                return
            except httpx.TransportError:
                await asyncio.sleep(0.05)
    raise AssertionError("the tunnel process did not start")


async def test_sigkill_under_load_then_restart_delivers_every_accepted_envelope(
    tmp_path: Path, upstream: Upstream
) -> None:
    dsn = f"http://public@127.0.0.1:{upstream.port}/42"
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'crash.db'}", "SENTRY_DSN": dsn}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "tunnel.log"
    upstream.hang(0.02)  # slow enough upstream that the outbox holds a backlog when the kill comes
    process = start_tunnel(port, env, log)
    acknowledged: list[bytes] = []
    try:
        await wait_listening(url, process)
        bodies = [error_event(dsn, message=f"crash {i}") for i in range(3000)]

        queue = list(reversed(bodies))

        async def sender(client: httpx.AsyncClient) -> None:
            while queue:
                body = queue.pop()
                try:
                    response = await client.post(url + "/monitoring", content=body)
                except httpx.TransportError:
                    return  # the process died before answering: the SDK still holds this one
                if response.status_code == 200:
                    acknowledged.append(body)

        async with httpx.AsyncClient(timeout=10) as client:
            senders = asyncio.gather(*(sender(client) for _ in range(16)))
            await until(lambda: len(acknowledged) >= 500, timeout=60)
            os.killpg(process.pid, signal.SIGKILL)
            await senders
        process.wait(10)
        assert 500 <= len(acknowledged) < len(bodies)
        assert len(upstream.accepted) < len(acknowledged), "nothing was pending at the kill"

        upstream.hang(0)
        process = start_tunnel(port, env, log)
        await wait_listening(url, process)
        await until(lambda: set(acknowledged) <= {r.body for r in upstream.accepted}, timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(10)
    delivered = [r.body for r in upstream.accepted]
    assert set(acknowledged) <= set(delivered)
