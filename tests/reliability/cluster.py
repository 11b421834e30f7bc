"""The reporting pipeline as it runs in production, for fault tests: `app.standalone.tunnel`
(the tunnel, outbox and forwarder of the Reflex backend, without the pages) under granian with
several workers, on a database of the test's, forwarding to a real upstream on loopback; and
clients that post envelopes to it and keep account of what was answered."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from httpx_aiohttp import AiohttpTransport

from tests.e2e.app_server import ROOT
from tests.services import children, free_port, read_value, stop_group

GRANIAN = str(Path(sys.executable).parent / "granian")


@dataclass
class Tunnels:
    """`workers` granian workers serving the pipeline on one port (a dead worker is respawned)."""
    env: dict[str, str]
    log: Path
    workers: int = 2
    module: str = "app.standalone.tunnel:app"  # or app.standalone.inbox:app, the inbox and its alerts
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [GRANIAN, "--interface", "asgi", self.module, "--host", "127.0.0.1",
                 "--port", str(self.port), "--workers", str(self.workers), "--respawn-failed-workers",
                 "--respawn-interval", "0.5", "--no-access-log", "--log-level", "warning", "--backlog", "2048"],
                cwd=ROOT, env={**os.environ, **self.env}, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"granian exited at start:\n{self.log_tail()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/monitoring/stats", timeout=2).status_code == 200 \
                        and len(self.worker_pids()) == self.workers:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"the pipeline did not answer within {timeout:g} s:\n{self.log_tail()}")

    def worker_pids(self) -> list[int]:
        """The worker processes (the granian process's children)."""
        return [] if self.process is None else children(self.process.pid)

    def kill_worker(self, pid: int | None = None) -> int:
        """SIGKILL a worker (`pid`, or the first; granian starts another); its pid."""
        victim = pid or self.worker_pids()[0]
        os.kill(victim, signal.SIGKILL)
        return victim

    def lease_holder_pid(self, name: str) -> int | None:
        """The pid of the worker holding lease `name` (reflex_lookout/background.py), if any."""
        holder = read_value(self.env["DATABASE_URL"], "select holder from worker_lease where name = :name", name=name)
        return int(str(holder).split(":")[1]) if holder else None

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            stop_group(process)

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else "(no log)"
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class Outcome:
    """What the clients saw: bodies answered 200, other answers by status, and transport errors."""
    acknowledged: list[bytes] = field(default_factory=list)
    sent: list[bytes] = field(default_factory=list)  # each body posted, once (not again after a 503)
    refused: collections.Counter[int] = field(default_factory=collections.Counter)
    retry_after_missing: int = 0  # 503s without a Retry-After
    transport_errors: int = 0


async def post_all(url: str, bodies: list[bytes], clients: int, retry_503: bool = False,
                   timeout: float = 30.0, outcome: Outcome | None = None,
                   until: Callable[[], bool] | None = None) -> Outcome:
    """POST every body from `clients` concurrent connections. With `retry_503`, a body answered 503
    is posted again after its Retry-After (capped at 1 s here), as an SDK would later; a transport
    error counts and the body is given up (the client never heard back: the SDK keeps it). With
    `until`, no new body is taken once it is true (a body answered 503 is still posted again): a
    test that acts mid-load keeps the load on as long as its fault needs, and no longer."""
    # (`outcome`, when given, is filled as answers come, for a test that acts mid-load.)
    outcome = outcome if outcome is not None else Outcome()  # given: the caller can watch it fill
    pending = collections.deque(bodies)
    retried: set[bytes] = set()  # bodies answered 503 and put back: posted again even after `until`
    # httpx's API over aiohttp's connections, as the forwarder (reflex_lookout/forwarder.py): httpx's own
    # pool cost this client ~2.4 ms of CPU per post, and 22 s for the thousand-connection test's
    # thousand (aiohttp's 0.5 ms, and 0.9 s), on a machine whose CPU is what the run waits for.
    transport = AiohttpTransport(limits=httpx.Limits(max_connections=clients, max_keepalive_connections=clients))
    async with httpx.AsyncClient(transport=transport, timeout=timeout, trust_env=False) as client:
        async def worker() -> None:
            while pending:
                body = pending.popleft()
                if body not in retried:
                    if until is not None and until():
                        continue  # the load is over: not posted (what was answered 503 still goes again)
                    outcome.sent.append(body)
                try:
                    answer = await client.post(f"{url}/monitoring", content=body)
                except httpx.TransportError:
                    outcome.transport_errors += 1
                    continue
                if answer.status_code == 200:
                    outcome.acknowledged.append(body)
                    continue
                outcome.refused[answer.status_code] += 1
                if answer.status_code == 503:
                    retry_after = answer.headers.get("retry-after")
                    outcome.retry_after_missing += retry_after is None
                    if retry_503:
                        await asyncio.sleep(min(1.0, float(retry_after or 1)))
                        retried.add(body)
                        pending.append(body)

        await asyncio.gather(*(worker() for _ in range(clients)))
    return outcome
