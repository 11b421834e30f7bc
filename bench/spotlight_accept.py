"""Accept rate over HTTP: Sentry Spotlight's sidecar and Lookout's tunnel on the same ~50 KB error
events as bench/inbox_ingest.py, posted by the same clients.

Lookout: `app.standalone.tunnel` (the tunnel and outbox, as in the Reflex backend) under
granian with one worker, in local mode (no SENTRY_DSN), on a SQLite file in a temp dir; the same
envelopes with the local DSN added to their header go to `POST /monitoring`; every answer must be
2xx, and afterwards the outbox must hold every envelope.

Spotlight (the npm package `@spotlightjs/spotlight` 4.11.8, pinned in bench/spotlight-package.json
with hono held at 4.12.25: with hono 4.13 every request answers 500; installed under
bench/.spotlight with `npm install` on first use) runs as a process of its own, only its sidecar:

    bench/.spotlight/node_modules/.bin/spotlight server --port PORT

(`server` is its default command; no browser is opened without `--open`, the UI is only served. It
has no host option and listens on every interface; it is spoken to on 127.0.0.1, on a free port.)
It has started when `GET /health` answers `OK` with `X-Powered-By: spotlight-by-sentry`. The
envelopes of `envelopes()` (bench/inbox_ingest.py), byte for byte, are POSTed to `/stream` with
`Content-Type: application/x-sentry-envelope` (it takes `/api/<id>/envelope/` as well) by 8
keep-alive httpx clients; every answer must be 2xx. Rate = envelopes / time from the first request
to the last answer (startup and read-back not counted).

What "accepted" means there: each envelope is JSON-parsed (header, item headers, payloads) and put
into a ring buffer in memory: nothing grouped, nothing on disk, gone when the process stops. The
buffer holds the newest 500 (`constructor(size = 500)` in
node_modules/@spotlightjs/spotlight/dist/server/messageBuffer.js, made without a size by
dist/server/utils/getBuffer.js); older ones are dropped. After posting, what it holds is read back
from its SSE stream (`GET /stream` replays the buffer) and must be min(events, 500) distinct
envelopes of those posted.

No DSN is needed: the envelope header is only parsed as JSON (dist/server/parser/processEnvelope.js;
nothing under dist/server reads a DSN), so the envelopes go exactly as `envelopes()` makes them.

Telemetry: Spotlight's CLI (dist/run.js) first loads dist/instrument.js, which starts the Sentry
SDK with a DSN of its own at sentry.io, `tracesSampleRate: 1` and no option to turn it off
(dist/sentry-config.js), and dist/server/main.js makes a transaction of every request. Two figures:
- as shipped: the command above, the SDK on (its own requests go to a closed local port, the SDK
  honouring `https_proxy`, so nothing leaves the machine; whether they fail fast or hang changed
  little here: most of its cost is the tracing itself, some 4–6 ms of CPU per request);
- without its SDK: the same sidecar code started by a two-line loader (`main()` of
  dist/server/cli.js with the same arguments, no UI files), so dist/instrument.js never runs and
  the SDK's calls do nothing. That is Spotlight's own work per envelope; on 2 cores it comes close
  to what this httpx client can post at all (~600/s to a Node server that only reads and parses
  the body).

    .venv/bin/python -m bench.spotlight_accept [--events 1000] [--size 50000] [--concurrency 8] [--runs 3]

Each run starts a fresh sidecar; the median of the runs is printed. The figures include HTTP over
loopback and the Python client sharing the cores with the sidecar; bench/inbox_ingest.py's figures
are in-process and store to SQLite, so they are not the same work. Prints figures; raises only if
Spotlight refuses an envelope or does not hold what it should.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from bench.harness.lookout import OUTBOX_CAP, outbox_rows
from bench.harness.processes import ROOT, Processes
from bench.harness.servers import free_port, granian, wait_ready as wait_answering
from bench.inbox_ingest import envelopes

SPOTLIGHT_PACKAGE = ROOT / "bench" / "spotlight-package.json"  # @spotlightjs/spotlight 4.11.8, pinned
SPOTLIGHT_DIR = ROOT / "bench" / ".spotlight"
SPOTLIGHT_BIN = SPOTLIGHT_DIR / "node_modules" / ".bin" / "spotlight"
SPOTLIGHT_MANIFEST = SPOTLIGHT_DIR / "node_modules" / "@spotlightjs" / "spotlight" / "package.json"
SPOTLIGHT_CLI = SPOTLIGHT_MANIFEST.parent / "dist" / "server" / "cli.js"  # what dist/run.js calls, after instrument.js
# The sidecar without its Sentry SDK: run.js's call of main(), without run.js's imports (instrument.js).
NO_SDK_LOADER = """const {{ main }} = await import({cli});
await main({{ basePath: process.cwd() }});
"""
# The local DSN the Lookout under test is started with (its own would be random, in its database).
LOCAL_DSN = "http://bench@localhost/1"
CAP = 500  # MessageBuffer's default size: dist/server/messageBuffer.js
CONTENT_TYPE = "application/x-sentry-envelope"
TELEMETRY_SINK = "http://127.0.0.1:9"  # a closed port: the sidecar's own Sentry SDK sends nowhere
# Variables that would change what the sidecar does: SPOTLIGHT_CAPTURE writes every body to a file,
# SPOTLIGHT_DEBUG logs every envelope, SENTRY_SPOTLIGHT sends its telemetry to a Spotlight,
# no_proxy could let its telemetry past the sink.
DROPPED_ENV = ("SPOTLIGHT_CAPTURE", "SPOTLIGHT_DEBUG", "SENTRY_SPOTLIGHT", "SENTRY_DEBUG", "no_proxy", "NO_PROXY")


def install() -> Path:
    """Spotlight's CLI, installed under bench/.spotlight from bench/spotlight-package.json the first
    time (and again whenever the pinned file changes)."""
    pinned = SPOTLIGHT_PACKAGE.read_text()
    manifest = SPOTLIGHT_DIR / "package.json"
    if SPOTLIGHT_BIN.exists() and manifest.exists() and manifest.read_text() == pinned:
        return SPOTLIGHT_BIN
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install Spotlight (bench/spotlight-package.json)")
    print(f"  installing Spotlight into {SPOTLIGHT_DIR} (once) ...", flush=True)
    SPOTLIGHT_DIR.mkdir(exist_ok=True)
    manifest.write_text(pinned)
    subprocess.run([npm, "install", "--no-audit", "--no-fund"], cwd=SPOTLIGHT_DIR, check=True)
    return SPOTLIGHT_BIN


def version() -> str:
    return json.loads(SPOTLIGHT_MANIFEST.read_text())["version"]


def sidecar_env() -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in DROPPED_ENV}
    return {**env, "https_proxy": TELEMETRY_SINK, "http_proxy": TELEMETRY_SINK}


def log_tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else "(no output)"


def wait_ready(process: subprocess.Popen[bytes], base: str, log: Path, timeout: float = 30.0) -> None:
    """Until `GET /health` answers `OK` from Spotlight, or raise if it exits or takes too long."""
    deadline = time.monotonic() + timeout
    with httpx.Client(trust_env=False, timeout=1.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"Spotlight exited ({process.returncode}) before answering:\n{log_tail(log)}")
            try:
                answer = client.get(f"{base}/health")
                if (answer.status_code == 200 and answer.text == "OK"
                        and answer.headers.get("x-powered-by") == "spotlight-by-sentry"):
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
    raise RuntimeError(f"Spotlight did not answer {base}/health within {timeout:g} s:\n{log_tail(log)}")


async def post_all(url: str, bodies: list[bytes], concurrency: int) -> float:
    """POST every body, `concurrency` keep-alive clients at a time; seconds from first to last answer."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    headers = {"Content-Type": CONTENT_TYPE}
    pending = iter(enumerate(bodies))

    async with httpx.AsyncClient(limits=limits, trust_env=False, timeout=30.0) as client:
        async def worker() -> None:
            for n, body in pending:
                answer = await client.post(url, content=body, headers=headers)
                if not answer.is_success:
                    raise RuntimeError(f"{url} refused envelope {n}: {answer.status_code} {answer.text[:300]!r}")

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start


def held_event_ids(base: str, idle: float = 2.0) -> list[str]:
    """The `event_id`s of the envelopes Spotlight holds: its SSE stream replays its buffer to a new
    subscriber, then stays open; read until nothing has come for `idle` seconds."""
    held: list[str] = []
    timeout = httpx.Timeout(10.0, read=idle)
    with httpx.Client(trust_env=False, timeout=timeout) as client:
        try:
            with client.stream("GET", f"{base}/stream", params={"client": "bench"}) as answer:
                answer.raise_for_status()
                for line in answer.iter_lines():
                    if line.startswith("data:"):
                        header = json.loads(line[len("data:"):])[0]
                        held.append(header.get("event_id", ""))
        except httpx.ReadTimeout:
            pass
    return held


def event_id(body: bytes) -> str:
    return json.loads(body.split(b"\n", 1)[0])["event_id"]


def check_held(held: list[str], bodies: list[bytes]) -> None:
    """What Spotlight holds must be min(len(bodies), CAP) distinct envelopes of those posted (the last
    to arrive; arrival order is not list order, since clients run side by side)."""
    expected = min(len(bodies), CAP)
    posted = {event_id(body) for body in bodies}
    if len(held) != expected or len(set(held)) != expected or not set(held) <= posted:
        raise RuntimeError(f"Spotlight holds {len(held)} envelopes ({len(set(held))} distinct, "
                           f"{len(set(held) - posted)} not posted); expected {expected} of those posted")


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def sidecar_command(port: int, workdir: Path, sdk: bool) -> list[str]:
    """Spotlight's CLI as shipped, or (`sdk=False`) the same `main()` through a loader in `workdir`."""
    arguments = ["server", "--port", str(port)]
    if sdk:
        return [str(SPOTLIGHT_BIN), *arguments]
    loader = workdir / "spotlight-no-sdk.mjs"
    loader.write_text(NO_SDK_LOADER.format(cli=json.dumps(SPOTLIGHT_CLI.as_uri())))
    return ["node", str(loader), *arguments]


def spotlight_rate(bodies: list[bytes], workdir: Path, concurrency: int = 8, sdk: bool = True) -> float:
    """Envelopes per second Spotlight's sidecar accepts (2xx), `concurrency` clients at a time;
    checks afterwards that it holds min(len(bodies), 500) of them. `sdk=False`: without
    its own Sentry SDK (see the module's docstring)."""
    install()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log = workdir / f"spotlight-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(sidecar_command(port, workdir, sdk), cwd=workdir, env=sidecar_env(),
                                   stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_ready(process, base, log)
        seconds = asyncio.run(post_all(f"{base}/stream", bodies, concurrency))
        held = held_event_ids(base)
        check_held(held, bodies)
        print(f"  Spotlight holds {len(held)} of the {len(bodies)} envelopes posted (its buffer keeps the last {CAP})",
              flush=True)
    finally:
        stop(process)
    return len(bodies) / seconds


def with_local_dsn(body: bytes) -> bytes:
    """The envelope with Lookout's local DSN in its header (the tunnel forwards only for its DSNs)."""
    header, _, rest = body.partition(b"\n")
    return json.dumps({**json.loads(header), "dsn": LOCAL_DSN}).encode() + b"\n" + rest


def lookout_rate(bodies: list[bytes], workdir: Path, concurrency: int = 8) -> float:
    """Envelopes per second Lookout's tunnel accepts (2xx: committed to its SQLite outbox before the
    answer) in local mode, as `app.standalone.tunnel` under granian (one worker), the same
    clients posting; checks afterwards that the outbox holds every one."""
    port, db_path = free_port(), workdir / "lookout.db"
    processes = Processes(workdir)
    env = {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN,
           "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP)}
    processes.start("lookout", granian("app.standalone.tunnel:app", port), env)
    try:
        wait_answering(processes, "lookout", port, "/monitoring/stats")
        seconds = asyncio.run(post_all(f"http://127.0.0.1:{port}/monitoring", [with_local_dsn(b) for b in bodies],
                                       concurrency))
    finally:
        processes.stop_all()
    if outbox_rows(db_path) != len(bodies):
        raise RuntimeError(f"Lookout's outbox holds {outbox_rows(db_path)} of the {len(bodies)} envelopes it accepted")
    print(f"  Lookout's outbox holds all {len(bodies)} envelopes posted (on disk)", flush=True)
    return len(bodies) / seconds


def rates(bodies: list[bytes], runs: int, concurrency: int, peer: str) -> list[float]:
    """`runs` figures for "spotlight", "spotlight_bare" (without its SDK) or "lookout"."""
    made = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="lookout-spotlight-bench-") as tmp:
            if peer == "lookout":
                made.append(lookout_rate(bodies, Path(tmp), concurrency))
            else:
                made.append(spotlight_rate(bodies, Path(tmp), concurrency, sdk=peer == "spotlight"))
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1000, help="events to post (default 1000)")
    parser.add_argument("--size", type=int, default=50_000, help="bytes per event, about (default 50000)")
    parser.add_argument("--concurrency", type=int, default=8, help="clients posting at once (default 8)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each variant, median printed (default 3)")
    args = parser.parse_args()
    bodies = envelopes(args.events, args.size)
    install()
    print(f"posting {args.events} events of ~{len(bodies[0]) // 1000} KB to Spotlight {version()}'s sidecar "
          f"({args.concurrency} keep-alive clients), {args.runs} runs each ...", flush=True)
    shipped = rates(bodies, args.runs, args.concurrency, "spotlight")
    bare = rates(bodies, args.runs, args.concurrency, "spotlight_bare")
    ours = rates(bodies, args.runs, args.concurrency, "lookout")
    print(f"\n{'':<10}{'events/s':>10}   (median; runs)")
    print(f"{'Spotlight':<10}{statistics.median(shipped):>10.1f}   as shipped, its Sentry SDK tracing each request "
          f"({', '.join(f'{rate:.0f}' for rate in shipped)})")
    print(f"{'':<10}{statistics.median(bare):>10.1f}   without its Sentry SDK "
          f"({', '.join(f'{rate:.0f}' for rate in bare)})")
    print(f"{'Lookout':<10}{statistics.median(ours):>10.1f}   its tunnel, local mode: each envelope committed to "
          f"SQLite before the answer ({', '.join(f'{rate:.0f}' for rate in ours)})")
    print(f"\nLookout / Spotlight = {statistics.median(ours) / statistics.median(shipped):.1f}× as shipped, "
          f"{statistics.median(ours) / statistics.median(bare):.1f}× without its SDK")
    print(f"accepted = answered 2xx over loopback: Spotlight parses into its in-memory buffer of the newest "
          f"{CAP} (nothing stored); Lookout keeps every one on disk (read into the inbox by its feeder)")


if __name__ == "__main__":
    main()
