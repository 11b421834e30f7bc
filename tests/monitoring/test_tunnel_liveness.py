"""Issue 13, item 9: while a hostile body is being refused, the backend keeps answering.

A real server (uvicorn, in a process of its own: tests/monitoring/liveness_app.py) serves the
tunnel, the ingest endpoints and `/ping`, with the inbox feeder running. Each hostile body is posted
while `/ping` is polled; no ping may wait on more than 200 ms of work of the server's event loop.
Afterwards a normal event is accepted and is in the inbox within 5 s.

What a ping waits on is measured as the CPU time of the server's main thread (where uvicorn runs the
event loop) while the ping is out, not as its wall-clock latency: the test suite runs in several
processes on two cores, and a ping can wait on the machine's other work too, which says nothing
about the server. Work done on the server's worker threads (decoding) is not counted: it is the
point that it happens beside the loop.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import random
import subprocess
import sys
import time
import uuid
import zlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app import db
from app.inbox.reading import InboxReader
from plugin_support.envelopes import error_event, header_line
from tests.e2e.app_server import ROOT
from tests.services import free_port

pytestmark = pytest.mark.anyio

DSN = "http://liveness@localhost/1"
MIB = 1024 * 1024
PING_DEADLINE_S = 0.2


class Server:
    def __init__(self, url: str, database_url: str, pid: int) -> None:
        self.url, self.database_url, self.pid = url, database_url, pid

    def loop_cpu_s(self) -> float:
        """CPU seconds the server's main thread (the event loop's) has used so far."""
        fields = Path(f"/proc/{self.pid}/task/{self.pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("liveness")
    port, database_url = free_port(), f"sqlite:///{folder / 'liveness.db'}"
    env = {**os.environ, "DATABASE_URL": database_url, "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": DSN,
           "LOOKOUT_SERVER_MONITORING": "off"}
    log = (folder / "server.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "tests.monitoring.liveness_app:app", "--host", "127.0.0.1",
         "--port", str(port), "--no-access-log", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(url, process, folder / "server.log")
        yield Server(url, database_url, process.pid)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, f"the server exited:\n{log.read_text()[-3000:]}"
        try:
            if httpx.get(url + "/ping", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the server did not start:\n{log.read_text()[-3000:]}")


def _header() -> bytes:
    return header_line({"event_id": uuid.uuid4().hex, "dsn": DSN}) + b"\n"


EMPTY_ITEM = b'{"type":"a"}\n\n'  # an item of an unknown type with an empty payload: 14 bytes


def gzip_of_items() -> bytes:
    """The issue's 20 KB of gzip: 750,000 empty items (10 MB once decoded)."""
    return gzip.compress(_header() + EMPTY_ITEM * 750_000)


def identity_of_items() -> bytes:
    """The same at the 20 MiB request cap, uncompressed: ~1.5 million items."""
    header = _header()
    return header + EMPTY_ITEM * ((20 * MIB - len(header)) // len(EMPTY_ITEM))


def gzip_past_the_envelope_cap() -> bytes:
    """~11 MiB of gzip that inflates past the 100 MiB envelope cap: 1 MiB of low-entropy text then
    2 MiB of zeros, over and over (an unbounded or badly fed decoder spends seconds on it)."""
    text = random.Random(7).randbytes(MIB).translate(bytes(b"acgt"[n % 4] for n in range(256)))
    compressor = zlib.compressobj(1, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    parts = [compressor.compress(_header())]
    for _ in range(40):
        parts += [compressor.compress(text), compressor.compress(bytes(2 * MIB))]
    body = b"".join([*parts, compressor.flush()])
    assert len(body) <= 20 * MIB
    return body


def _envelope(*items: tuple[str, bytes]) -> bytes:
    return _header() + b"".join(header_line({"type": kind, "length": len(payload)}) + b"\n" + payload + b"\n"
                                for kind, payload in items)


def deep_event() -> bytes:
    return gzip.compress(_envelope(("event", b'{"extra":{"x":' + b"[" * 200_000 + b"]" * 200_000 + b"}}")))


def long_values_event() -> bytes:
    value = "x" * (MIB // 2 - 1000)  # no "@": what the e-mail pattern was quadratic on
    event = {"event_id": uuid.uuid4().hex, "message": value,
             "exception": {"values": [{"type": "Error", "value": value}]}}
    return _envelope(("event", json.dumps(event).encode()))


def non_finite_and_deep_spans() -> bytes:
    spans = ",".join(f'{{"span_id":"{i:016x}","parent_span_id":"{i - 1:016x}","start_timestamp":1,"timestamp":2}}'
                     for i in range(1, 5000))
    transaction = ('{"type":"transaction","transaction":"deep","start_timestamp":1,"timestamp":2,'
                   '"contexts":{"trace":{"trace_id":"' + "c" * 32 + '","span_id":"' + "0" * 16 + '"}},'
                   '"spans":[' + spans + "]}")
    return _envelope(("transaction", transaction.encode()), ("event", b'{"message":"late","timestamp":NaN}'))


def log_with_infinity() -> bytes:
    """A log line timed at Infinity (which json.loads accepts) used to break /logs: now refused."""
    return _envelope(("log", b'{"items":[{"timestamp":Infinity,"level":"error","body":"never finite"}]}'))


HOSTILE = {
    "tunnel-gzip-items": ("/monitoring", gzip_of_items, "gzip"),
    "tunnel-20mib-of-items": ("/monitoring", identity_of_items, ""),
    "tunnel-gzip-past-the-cap": ("/monitoring", gzip_past_the_envelope_cap, "gzip"),
    "ingest-gzip-items": ("/api/1/envelope/?sentry_key=liveness", gzip_of_items, "gzip"),
    "tunnel-log-with-infinity": ("/monitoring", log_with_infinity, ""),
}


async def _pings(server: Server, client: httpx.AsyncClient, done: asyncio.Event, waits: list[tuple[float, float]]) -> None:
    """Ping until `done`; each ping's (event-loop CPU seconds while it was out, wall-clock seconds)."""
    while not done.is_set():
        started, loop_before = time.perf_counter(), server.loop_cpu_s()
        response = await client.get("/ping", timeout=60)
        waits.append((server.loop_cpu_s() - loop_before, time.perf_counter() - started))
        assert response.status_code == 200
        await asyncio.sleep(0.02)


def slowest(waits: list[tuple[float, float]]) -> str:
    loop_s, wall_s = max(waits)
    return f"a ping waited on {loop_s:.3f} s of the event loop's work ({wall_s:.3f} s in all), of {len(waits)} pings"


@pytest.mark.parametrize("name", sorted(HOSTILE))
async def test_ping_answers_within_200_ms_while_a_hostile_body_is_refused(server: Server, name: str) -> None:
    path, make, encoding = HOSTILE[name]
    body = make()
    headers = {"Content-Encoding": encoding} if encoding else {}
    waits: list[tuple[float, float]] = []
    done = asyncio.Event()
    async with httpx.AsyncClient(base_url=server.url) as pinger, httpx.AsyncClient(base_url=server.url) as poster:
        await pinger.get("/ping")  # the connection is open before the clock starts
        polling = asyncio.create_task(_pings(server, pinger, done, waits))
        try:
            response = await poster.post(path, content=body, headers=headers, timeout=120)
        finally:
            done.set()
            await polling
    assert waits and max(waits)[0] < PING_DEADLINE_S, slowest(waits)
    assert response.status_code in (400, 413), response.text
    assert response.json()["detail"].endswith(".")


async def test_a_normal_event_after_them_is_accepted_and_in_the_inbox_within_5_s(server: Server) -> None:
    body = error_event(DSN, message="after the storm")
    event_id = json.loads(body.split(b"\n")[0])["event_id"]
    async with httpx.AsyncClient(base_url=server.url) as client:
        response = await client.post("/monitoring", content=body)
    assert response.status_code == 200, response.text
    reader = InboxReader(db.engine(server.database_url))
    deadline = time.monotonic() + 5
    while reader.event(event_id) is None:
        assert time.monotonic() < deadline, "the event did not reach the inbox within 5 s"
        await asyncio.sleep(0.05)


# Items 7, 8 and 11: bodies whose reading in the feeder used to kill it (RecursionError), hold the
# GIL for minutes (a quadratic pattern) or break the reads (non-finite numbers, deep span trees).
# Since issue 35 they are read before the first write (to be filtered and scrubbed, on a worker
# thread): 7 and 11 are refused there with a sentence (JSON too deep), 8 is accepted and read again by
# the feeder. Either way /ping keeps answering, and a normal event sent right after is in the inbox
# within 5 s.
ACCEPTED_HOSTILE = {
    "item-7-nested-200000-deep": (deep_event, "gzip", 400),
    "item-8-half-mib-values-without-at": (long_values_event, "", 200),
    "item-11-non-finite-and-5000-nested-spans": (non_finite_and_deep_spans, "", 400),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED_HOSTILE))
async def test_ping_answers_while_the_feeder_reads_a_hostile_event_and_the_next_one_arrives(
        server: Server, name: str) -> None:
    make, encoding, status = ACCEPTED_HOSTILE[name]
    headers = {"Content-Encoding": encoding} if encoding else {}
    following = error_event(DSN, message=f"after {name}")
    event_id = json.loads(following.split(b"\n")[0])["event_id"]
    reader = InboxReader(db.engine(server.database_url))
    waits: list[tuple[float, float]] = []
    done = asyncio.Event()
    async with httpx.AsyncClient(base_url=server.url) as pinger, httpx.AsyncClient(base_url=server.url) as poster:
        await pinger.get("/ping")
        polling = asyncio.create_task(_pings(server, pinger, done, waits))
        try:
            hostile = await poster.post("/monitoring", content=make(), headers=headers, timeout=60)
            normal = await poster.post("/monitoring", content=following, timeout=60)
            deadline = time.monotonic() + 5
            while await asyncio.to_thread(reader.event, event_id) is None:
                assert time.monotonic() < deadline, "the event after the hostile one was not in the inbox within 5 s"
                await asyncio.sleep(0.05)
        finally:
            done.set()
            await polling
    assert (hostile.status_code, normal.status_code) == (status, 200), hostile.text
    assert status == 200 or hostile.json()["detail"].endswith(".")
    assert waits and max(waits)[0] < PING_DEADLINE_S, slowest(waits)
