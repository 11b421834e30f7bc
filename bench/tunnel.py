"""Benchmark of Lookout's Sentry tunnel against nginx and a naive httpx pass-through.

    .venv/bin/python bench/tunnel.py [--seconds 10] [--warmup 2] [--connections 32] [--drain-count 5000]

Three peers receive the same 6–7 KB browser error envelope from the same load generator (wrk, or
bench/loadgen.py without it) and deliver to the same loopback upstream (bench/upstream.py, a
process of its own). Each peer runs alone: started, warmed up, measured, stopped. Everything
listens on 127.0.0.1 and is torn down at the end. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import os
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import envelope  # noqa: E402

PYTHON = sys.executable
GRANIAN = str(Path(sys.executable).parent / "granian")
HOST = "127.0.0.1"
PROJECT_ID = "42"
CLK_TCK = os.sysconf("SC_CLK_TCK")
GOAL_VS_NGINX, GOAL_VS_NAIVE, GOAL_P99_MS = 0.25, 10.0, 15.0
DRAIN_TIMEOUT_S = 300.0
# The burst fills the outbox faster than it drains; a cap above the burst keeps 503s out of the
# intake figures (the cap itself is tested in tests/monitoring/test_tunnel.py).
OUTBOX_CAP = 4 * 1024**3
# One load generator on loopback sends far more than a real client: the intake rates (429) are off.
NO_INTAKE_LIMITS = {"LOOKOUT_INGEST_BYTES_PER_MIN_PER_CLIENT": "0", "LOOKOUT_INGEST_BYTES_PER_MIN_PER_KEY": "0"}

WRK_SCRIPT = """\
local file = assert(io.open("{body}", "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/x-sentry-envelope"

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT_JSON {{"requests":%d,"duration_us":%d,"status_errors":%d,"socket_errors":%d,' ..
    '"p50_us":%.1f,"p99_us":%.1f,"max_us":%.1f}}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"""

NGINX_CONF = """\
worker_processes {workers};
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {dir}/client_body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  client_body_buffer_size 64k;
  client_max_body_size 20m;
  keepalive_requests 1000000;
  upstream sentry {{
    server {host}:{upstream_port};
    keepalive 64;
    keepalive_requests 1000000;
  }}
  server {{
    listen {host}:{port};
    location = /ready {{ return 200 "ready"; }}
    location /monitoring {{
      proxy_pass http://sentry/api/{project}/envelope/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""


# Results.


@dataclass(frozen=True)
class Load:
    """What one load-generator run measured."""

    requests: int
    non_2xx: int
    socket_errors: int
    seconds: float
    p50_ms: float
    p99_ms: float

    @property
    def accepted(self) -> int:
        return self.requests - self.non_2xx

    @property
    def per_s(self) -> float:
        return self.accepted / self.seconds if self.seconds else 0.0

    @classmethod
    def from_json(cls, data: dict[str, float]) -> Load:
        return cls(
            requests=int(data["requests"]), non_2xx=int(data["status_errors"]),
            socket_errors=int(data["socket_errors"]), seconds=data["duration_us"] / 1e6,
            p50_ms=data["p50_us"] / 1e3, p99_ms=data["p99_us"] / 1e3,
        )


@dataclass(frozen=True)
class Drain:
    backlog: int  # outbox rows when the load stopped
    seconds: float
    left: int = 0  # rows still there when the drain timed out

    @property
    def per_s(self) -> float | None:
        return self.backlog / self.seconds if self.backlog and self.seconds else None


@dataclass
class Outcome:
    """One peer's row of the table, and what was checked besides."""

    load: Load | None = None
    accepted_total: int = 0  # 2xx answers over warm-up + measurement, by the load generator
    loaded_seconds: float = 0.0  # warm-up + measurement
    upstream_got: int = 0  # envelopes upstream received over warm-up + measurement (+ drain)
    cpu: dict[str, float] = field(default_factory=dict)  # % of one core during the measurement
    skipped: str = ""
    tunnel_accepted: int | None = None  # Lookout's own count of 200s
    forwarded_during_load: int | None = None
    drain: Drain | None = None


@dataclass(frozen=True)
class Peer:
    """A tunnel under test: how to start it, and where it is ready."""

    key: str
    label: str
    port: int
    argv: list[str]
    env: dict[str, str]
    ready_path: str
    db_path: Path | None = None  # Lookout's outbox


# Processes.


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


class Processes:
    """Every process the benchmark starts, each in a session (process group) of its own."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"{name}.log").open("ab")
        process = subprocess.Popen(
            argv, cwd=ROOT, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        log.close()
        self.running[name] = process
        return process

    def stop(self, name: str) -> None:
        process = self.running.pop(name, None)
        if process is None:
            return
        for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        # Workers of the group may outlive their parent for a moment: make sure none is left.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    def stop_all(self) -> None:
        for name in list(self.running):
            self.stop(name)

    def log_tail(self, name: str, lines: int = 15) -> str:
        path = self.log_dir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def cpu_seconds(self, name: str) -> float:
        """User + system CPU of every live process in `name`'s process group."""
        process = self.running[name]
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                fields = stat.read_text().rpartition(")")[2].split()
                if int(fields[2]) == process.pid:  # pgrp (field 5 of stat; index 2 after the name)
                    total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / CLK_TCK


def http(method: str, port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    request = urllib.request.Request(f"http://{HOST}:{port}{path}", method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_ready(processes: Processes, name: str, port: int, path: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if processes.running[name].poll() is not None:
            raise RuntimeError(f"{name} exited at start:\n{processes.log_tail(name)}")
        with contextlib.suppress(OSError):
            http("GET", port, path, timeout=2.0)
            return
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not answer on port {port} within {timeout:.0f} s:\n{processes.log_tail(name)}")


def granian(target: str, port: int, interface: str = "asgi", workers: int = 1) -> list[str]:
    return [
        GRANIAN, "--interface", interface, target, "--host", HOST, "--port", str(port),
        "--workers", str(workers), "--no-access-log", "--log-level", "warning",
    ]


def ensure_binary(binary: str, package: str) -> str | None:
    """The binary's path; installs the Debian package when missing and we are root."""
    found = shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/bin")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print(f"  {binary} is missing: apt-get install -y {package} ...", flush=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", package], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, check=False,
    )
    return shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/bin")


# Load generation.


@dataclass(frozen=True)
class LoadGenerator:
    wrk: str | None
    body_path: Path
    script_path: Path
    connections: int
    why_not_wrk: str = ""

    @property
    def label(self) -> str:
        return "wrk, 1 thread" if self.wrk else f"bench/loadgen.py (asyncio; {self.why_not_wrk})"

    def argv(self, port: int, seconds: int) -> list[str]:
        if self.wrk:
            return [
                self.wrk, "-t1", f"-c{self.connections}", f"-d{seconds}s", "--timeout", "10s",
                "--latency", "-s", str(self.script_path), f"http://{HOST}:{port}/monitoring",
            ]
        return [
            PYTHON, str(ROOT / "bench" / "loadgen.py"), "--host", HOST, "--port", str(port),
            "--body", str(self.body_path), "--connections", str(self.connections), "--seconds", str(seconds),
        ]

    def run(self, port: int, seconds: int) -> tuple[Load, float]:
        """One bounded run; also returns the CPU seconds the generator used."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = subprocess.run(
            self.argv(port, seconds), capture_output=True, text=True, timeout=seconds + 60, check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        for line in reversed(result.stdout.splitlines()):
            if line.startswith("RESULT_JSON "):
                return Load.from_json(json.loads(line.removeprefix("RESULT_JSON "))), cpu
        raise RuntimeError(f"the load generator printed no result:\n{result.stdout}\n{result.stderr}")


# The peers.


class Bench:
    def __init__(self, args: argparse.Namespace, workdir: Path, processes: Processes) -> None:
        self.args = args
        self.workdir = workdir
        self.processes = processes
        self.upstream_port = free_port()
        self.dsn = f"http://public@{HOST}:{self.upstream_port}/{PROJECT_ID}"
        self.body = envelope.build(self.dsn)
        body_path = workdir / "envelope.bin"
        body_path.write_bytes(self.body)
        script_path = workdir / "post.lua"
        script_path.write_text(WRK_SCRIPT.format(body=body_path))
        wrk = None if args.loadgen == "python" else ensure_binary("wrk", "wrk")
        why = "--loadgen python" if args.loadgen == "python" else "wrk is not installed"
        self.loadgen = LoadGenerator(wrk, body_path, script_path, args.connections, why)

    def start_upstream(self) -> None:
        self.processes.start("upstream", granian("bench.upstream:app", self.upstream_port, "rsgi"))
        wait_ready(self.processes, "upstream", self.upstream_port, "/count")

    def upstream_count(self) -> int:
        return int(json.loads(http("GET", self.upstream_port, "/count")[1])["envelopes"])

    def reset_upstream(self) -> None:
        http("POST", self.upstream_port, "/reset")

    # Peer definitions.

    def nginx_peer(self, nginx: str) -> Peer:
        directory = self.workdir / "nginx"
        directory.mkdir()
        for path in (self.workdir, directory):
            path.chmod(0o755)  # nginx workers run as an unprivileged user
        port = free_port()
        conf = directory / "nginx.conf"
        conf.write_text(NGINX_CONF.format(
            workers=self.args.nginx_workers, dir=directory, host=HOST, port=port,
            upstream_port=self.upstream_port, project=PROJECT_ID,
        ))
        argv = [nginx, "-e", str(directory / "error.log"), "-c", str(conf), "-p", str(directory),
                "-g", "daemon off;"]
        workers = self.args.nginx_workers
        label = f"nginx proxy_pass ({workers} worker{'s' if workers != '1' else ''})"
        return Peer("nginx", label, port, argv, {}, "/ready")

    def naive_peer(self) -> Peer:
        port = free_port()
        return Peer("naive", "naive httpx (granian, 1 worker)", port, granian("bench.naive:app", port),
                    {"SENTRY_DSN": self.dsn}, "/nothing")

    def lookout_peer(self, synchronous: str = "NORMAL") -> Peer:
        key = "lookout" if synchronous == "NORMAL" else f"lookout_{synchronous.lower()}"
        port = free_port()
        db_path = self.workdir / key / "bench.db"
        db_path.parent.mkdir()
        env = {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": self.dsn,
               "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP), "LOOKOUT_SQLITE_SYNCHRONOUS": synchronous,
               **NO_INTAKE_LIMITS}
        label = "Lookout tunnel (granian, 1 worker)" + ("" if key == "lookout" else f", {synchronous}")
        return Peer(key, label, port, granian("app.monitoring.standalone:app", port), env, "/monitoring/stats", db_path)

    def lookout_in_reflex_peer(self) -> Peer:
        """The same tunnel inside the Reflex backend (`reflex run --env prod --backend-only`), behind
        Reflex's own outer ASGI layers; its database holds Reflex's tables too."""
        port = free_port()
        db_path = self.workdir / "lookout_reflex" / "bench.db"
        db_path.parent.mkdir()
        env = {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": self.dsn,
               "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP), **NO_INTAKE_LIMITS}
        argv = [str(Path(sys.executable).parent / "reflex"), "run", "--env", "prod", "--backend-only",
                "--backend-host", HOST, "--backend-port", str(port), "--loglevel", "warning"]
        return Peer("lookout_reflex", "Lookout tunnel in the Reflex backend", port, argv, env,
                    "/monitoring/stats", db_path)

    # Measuring one peer.

    def measure(self, peer: Peer) -> Outcome:
        outcome = Outcome()
        self.processes.start(peer.key, peer.argv, peer.env)
        try:
            wait_ready(self.processes, peer.key, peer.port, peer.ready_path)
            self.reset_upstream()
            warmup = self.loadgen.run(peer.port, self.args.warmup)[0] if self.args.warmup else Load(0, 0, 0, 0, 0, 0)
            cpu_before = {name: self.processes.cpu_seconds(name) for name in (peer.key, "upstream")}
            load, loadgen_cpu = self.loadgen.run(peer.port, self.args.seconds)
            outcome.cpu = {
                name: 100 * (self.processes.cpu_seconds(name) - before) / load.seconds
                for name, before in cpu_before.items()
            }
            outcome.cpu["loadgen"] = 100 * loadgen_cpu / load.seconds
            outcome.load = load
            outcome.accepted_total = warmup.accepted + load.accepted
            outcome.loaded_seconds = warmup.seconds + load.seconds
            if peer.db_path is not None:
                self.lookout_after_load(peer, outcome)
            else:
                time.sleep(0.2)  # answers cut off by the generator's deadline may still be in flight
            outcome.upstream_got = self.upstream_count()
        finally:
            self.processes.stop(peer.key)
        return outcome

    def lookout_after_load(self, peer: Peer, outcome: Outcome) -> None:
        assert peer.db_path is not None
        stats = json.loads(http("GET", peer.port, "/monitoring/stats")[1])
        outcome.forwarded_during_load = int(stats["forwarded"])
        outcome.drain = measure_drain(peer.db_path)
        stats = json.loads(http("GET", peer.port, "/monitoring/stats")[1])
        outcome.tunnel_accepted = int(stats["accepted"])

    def transport_drain(self, transport: str) -> tuple[float | None, int, str]:
        """(envelopes/s, what upstream received, error) for a pre-filled outbox drained alone."""
        db_path = self.workdir / f"drain-{transport}" / "drain.db"
        db_path.parent.mkdir()
        self.reset_upstream()
        try:
            result = subprocess.run(
                [PYTHON, str(ROOT / "bench" / "drain.py"), "--db", str(db_path), "--dsn", self.dsn,
                 "--count", str(self.args.drain_count), "--body", str(self.loadgen.body_path),
                 "--transport", transport],
                cwd=ROOT, capture_output=True, text=True, timeout=DRAIN_TIMEOUT_S + 120, check=False,
            )
        except subprocess.TimeoutExpired:
            return None, self.upstream_count(), f"bench/drain.py did not finish in {DRAIN_TIMEOUT_S + 120:.0f} s"
        got = self.upstream_count()
        lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
        if result.returncode != 0 or not lines:
            return None, got, (result.stderr.strip().splitlines() or ["no output"])[-1]
        return float(json.loads(lines[-1])["per_s"]), got, ""


def outbox_rows(db_path: Path) -> int:
    with contextlib.closing(sqlite3.connect(db_path, timeout=10)) as connection:
        return int(connection.execute("select count(*) from outbox").fetchone()[0])


def measure_drain(db_path: Path) -> Drain:
    """Time from the end of the load until the outbox is empty."""
    started = time.perf_counter()
    backlog = outbox_rows(db_path)
    rows = backlog
    while rows > 0 and time.perf_counter() - started < DRAIN_TIMEOUT_S:
        time.sleep(0.02)
        rows = outbox_rows(db_path)
    return Drain(backlog, time.perf_counter() - started, rows)


# Output.


def goal(value: float, target: float, at_least: bool) -> str:
    met = value >= target if at_least else value <= target
    return f"goal {'≥' if at_least else '≤'} {target:g}: {'met' if met else 'NOT met'}"


def versions() -> str:
    def version(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    fast_loops = [name for name in ("rloop", "uvloop") if importlib.util.find_spec(name)]
    loop = f"the {fast_loops[0]} loop" if fast_loops else "the asyncio loop (no rloop/uvloop installed)"
    return (f"Python {sys.version.split()[0]}, granian {version('granian')} on {loop}, httpx {version('httpx')},"
            f" sniffio {version('sniffio')}")


def print_header(bench: Bench, args: argparse.Namespace) -> None:
    print(f"Tunnel benchmark: {len(bench.body):,}-byte JavaScript error envelope (sentry.javascript.react, 20 frames),")
    print(f"  {args.connections} keep-alive connections, {args.seconds:g} s measured after {args.warmup:g} s warm-up,"
          f" load by {bench.loadgen.label}.")
    print(f"  Machine: {os.cpu_count()} cores, shared by the load generator, the peer and the upstream"
          " (all on 127.0.0.1): compare rows, not absolute figures.")
    print("  Upstream: bench/upstream.py (bare RSGI app, granian 1 worker, own process), answers 200 {}.")
    print(f"  {versions()}.")
    print("  Lookout: SQLite outbox in a temp dir (WAL; synchronous=NORMAL, the default, and FULL in its own row),")
    print(f"  outbox cap {OUTBOX_CAP / 1024**3:g} GiB, forwarder in the same process.")
    print()


def print_table(peers: list[Peer], outcomes: dict[str, Outcome]) -> None:
    header = f"{'peer':<36} {'accepted/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'non-2xx':>7} {'sock err':>8}  {'CPU % peer/upstream/loadgen':>27}"
    print(header)
    print("-" * len(header))
    for key, outcome in outcomes.items():
        if outcome.skipped:
            print(f"{key:<36} skipped: {outcome.skipped}")
    for peer in peers:
        outcome = outcomes[peer.key]
        if outcome.load is None:
            continue
        load, cpu = outcome.load, outcome.cpu
        cpu_text = f"{cpu.get(peer.key, 0):.0f} / {cpu.get('upstream', 0):.0f} / {cpu.get('loadgen', 0):.0f}"
        print(f"{peer.label:<36} {load.per_s:>10,.0f} {load.p50_ms:>7.2f} {load.p99_ms:>7.2f} "
              f"{load.non_2xx:>7,} {load.socket_errors:>8,}  {cpu_text:>27}")
    print()


def print_ratios(outcomes: dict[str, Outcome]) -> None:
    lookout = outcomes.get("lookout")
    if lookout is None or lookout.load is None:
        return
    rate = lookout.load.per_s
    for key, name, target in (("nginx", "nginx", GOAL_VS_NGINX), ("naive", "naive httpx", GOAL_VS_NAIVE)):
        other = outcomes.get(key)
        if other is not None and other.load is not None and other.load.per_s:
            ratio = rate / other.load.per_s
            print(f"Lookout / {name:<12} = {ratio:6.2f}×   ({goal(ratio, target, True)})")
        else:
            print(f"Lookout / {name:<12} =    n/a   (peer skipped)")
    print(f"Lookout p99          = {lookout.load.p99_ms:6.2f} ms ({goal(lookout.load.p99_ms, GOAL_P99_MS, False)})")
    print()


def print_lookout_details(outcome: Outcome) -> None:
    if outcome.load is None:
        return
    drain = outcome.drain
    if outcome.forwarded_during_load is not None and outcome.tunnel_accepted:
        print(f"Lookout forwarder during the load: {outcome.forwarded_during_load:,} of"
              f" {outcome.tunnel_accepted:,} accepted envelopes delivered"
              f" ({100 * outcome.forwarded_during_load / outcome.tunnel_accepted:.0f} %).")
    if drain is not None:
        if drain.left:
            print(f"Lookout outbox drain: {drain.left:,} of {drain.backlog:,} envelopes still pending after"
                  f" {drain.seconds:.0f} s (timed out).")
        elif drain.per_s is None:
            print("Lookout outbox drain: the outbox was empty when the load stopped (forwarder kept pace).")
        else:
            print(f"Lookout outbox drain: {drain.backlog:,} envelopes pending when the load stopped,"
                  f" emptied in {drain.seconds:.2f} s → {drain.per_s:,.0f} envelopes/s.")
    accepted = outcome.tunnel_accepted if outcome.tunnel_accepted is not None else outcome.accepted_total
    if drain is not None and outcome.loaded_seconds:
        total_s = outcome.loaded_seconds + drain.seconds
        print(f"Lookout end to end: {accepted:,} envelopes accepted and delivered within {total_s:.1f} s of load"
              f" + drain → {accepted / total_s:,.0f} envelopes/s sustained.")
    verdict = "OK" if outcome.upstream_got >= accepted else "LOST ENVELOPES"
    print(f"Durability: the tunnel answered 200 for {accepted:,} envelopes (its own count;"
          f" the load generator saw {outcome.accepted_total:,}); upstream received"
          f" {outcome.upstream_got:,} → {verdict}.")


def print_peer_checks(peers: list[Peer], outcomes: dict[str, Outcome]) -> None:
    for peer in peers:
        outcome = outcomes[peer.key]
        if peer.key != "lookout" and outcome.load is not None:
            print(f"{peer.key}: upstream received {outcome.upstream_got:,} for"
                  f" {outcome.accepted_total:,} 2xx answers (warm-up included).")


def print_transport_drains(bench: Bench, count: int) -> None:
    print()
    print(f"Forwarder drain of a pre-filled outbox ({count:,} envelopes; bench/drain.py, Forwarder alone,"
          " same upstream):")
    rates: dict[str, float] = {}
    for transport, label in (("httpx", "httpx default transport"), ("aiohttp", "httpx-aiohttp transport")):
        rate, got, error = bench.transport_drain(transport)
        if rate is None:
            print(f"  {label:<24}: failed ({error})")
            continue
        rates[transport] = rate
        check = "all delivered" if got >= count else f"only {got:,} delivered"
        print(f"  {label:<24}: {rate:8,.0f} envelopes/s  (upstream received {got:,}: {check})")
    if len(rates) == 2:
        print(f"  aiohttp / httpx        : {rates['aiohttp'] / rates['httpx']:.2f}×")


# Main.


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10, help="measured load per peer, whole seconds (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up load per peer, whole seconds (default 2)")
    parser.add_argument("--connections", type=int, default=32, help="concurrent keep-alive connections")
    parser.add_argument("--drain-count", type=int, default=5000,
                        help="envelopes in the pre-filled outbox of the transport comparison (0: skip it)")
    parser.add_argument("--nginx-workers", default="1", help="nginx worker_processes: 1 (default) or auto")
    parser.add_argument("--loadgen", choices=["auto", "python"], default="auto",
                        help="auto: wrk when available; python: bench/loadgen.py")
    parser.add_argument("--peers", default="nginx,naive,lookout,lookout_full,lookout_reflex", help="comma-separated subset to run")
    args = parser.parse_args()
    if not (0 < args.seconds <= 600 and 0 <= args.warmup <= 60 and 1 <= args.connections <= 1024):
        parser.error("keep --seconds in (0, 600], --warmup in [0, 60], --connections in [1, 1024]")
    return args


def run(args: argparse.Namespace, workdir: Path, processes: Processes) -> None:
    bench = Bench(args, workdir, processes)
    bench.start_upstream()
    print_header(bench, args)
    wanted = args.peers.split(",")
    peers: list[Peer] = []
    outcomes: dict[str, Outcome] = {}
    if "nginx" in wanted:
        nginx = ensure_binary("nginx", "nginx")
        if nginx:
            peers.append(bench.nginx_peer(nginx))
        else:
            print("nginx is absent (and could not be installed): its row is skipped.")
            outcomes["nginx"] = Outcome(skipped="nginx is not installed")
    if "naive" in wanted:
        peers.append(bench.naive_peer())
    if "lookout" in wanted:
        peers.append(bench.lookout_peer())
    if "lookout_full" in wanted:
        peers.append(bench.lookout_peer("FULL"))
    if "lookout_reflex" in wanted:
        peers.append(bench.lookout_in_reflex_peer())
    for peer in peers:
        print(f"  measuring {peer.label} ...", flush=True)
        outcomes[peer.key] = bench.measure(peer)
    print()
    print_table(peers, outcomes)
    print_ratios(outcomes)
    if "lookout" in outcomes:
        print_lookout_details(outcomes["lookout"])
    print_peer_checks(peers, outcomes)
    if args.drain_count > 0:
        print_transport_drains(bench, args.drain_count)


@contextlib.contextmanager
def workspace() -> Iterator[tuple[Path, Processes]]:
    workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-"))
    processes = Processes(workdir)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` runs on SIGTERM too
    try:
        yield workdir, processes
    finally:
        processes.stop_all()
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    args = parse_args()
    with workspace() as (workdir, processes):
        run(args, workdir, processes)


if __name__ == "__main__":
    main()
