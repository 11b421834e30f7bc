"""Benchmark of Lookout's Sentry tunnel against nginx and a naive httpx pass-through.

    .venv/bin/python -m bench.tunnel [--seconds 10] [--warmup 2] [--connections 32] [--drain-count 5000]

Three peers receive the same 6–7 KB browser error envelope from the same load generator (wrk, or
bench/loadgen.py without it) and deliver to the same loopback upstream (bench/upstream.py, a
process of its own). Each peer runs alone: started, warmed up, measured, stopped. Everything
listens on 127.0.0.1 and is torn down at the end. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench import envelope
from bench.harness.load import Load, load_generator
from bench.harness.lookout import outbox_rows
from bench.harness.processes import ROOT, Processes, workspace
from bench.harness.servers import HOST, free_port, granian, http, wait_ready
from bench.tunnel_peers import PEERS, PROJECT_ID, Peer, chosen_peers
from bench.tunnel_report import (
    Drain,
    Outcome,
    print_header,
    print_lookout_details,
    print_peer_checks,
    print_ratios,
    print_table,
    print_transport_drains,
)

DRAIN_TIMEOUT_S = 300.0


class Bench:
    """The upstream, the load generator, and measuring one peer at a time against them."""

    def __init__(self, args: argparse.Namespace, workdir: Path, processes: Processes) -> None:
        self.args = args
        self.workdir = workdir
        self.processes = processes
        self.upstream_port = free_port()
        self.dsn = f"http://public@{HOST}:{self.upstream_port}/{PROJECT_ID}"
        self.body = envelope.build(self.dsn)
        self.loadgen = load_generator(workdir, self.body, args.connections, python=args.loadgen == "python")

    def start_upstream(self) -> None:
        self.processes.start("upstream", granian("bench.upstream:app", self.upstream_port, "rsgi"))
        wait_ready(self.processes, "upstream", self.upstream_port, "/count")

    def upstream_count(self) -> int:
        return int(json.loads(http("GET", self.upstream_port, "/count")[1])["envelopes"])

    def reset_upstream(self) -> None:
        http("POST", self.upstream_port, "/reset")

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
                [sys.executable, "-m", "bench.drain", "--db", str(db_path), "--dsn", self.dsn,
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


def measure_drain(db_path: Path) -> Drain:
    """Time from the end of the load until the outbox is empty."""
    started = time.perf_counter()
    backlog = outbox_rows(db_path)
    rows = backlog
    while rows > 0 and time.perf_counter() - started < DRAIN_TIMEOUT_S:
        time.sleep(0.02)
        rows = outbox_rows(db_path)
    return Drain(backlog, time.perf_counter() - started, rows)


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
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset to run")
    args = parser.parse_args()
    if not (0 < args.seconds <= 600 and 0 <= args.warmup <= 60 and 1 <= args.connections <= 1024):
        parser.error("keep --seconds in (0, 600], --warmup in [0, 60], --connections in [1, 1024]")
    return args


def run(args: argparse.Namespace, workdir: Path, processes: Processes) -> None:
    bench = Bench(args, workdir, processes)
    bench.start_upstream()
    print_header(len(bench.body), bench.loadgen.label, args)
    peers, skipped = chosen_peers(args.peers.split(","), workdir, bench.dsn, bench.upstream_port, args.nginx_workers)
    outcomes = {key: Outcome(skipped=why) for key, why in skipped.items()}
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
        print_transport_drains(args.drain_count, bench.transport_drain)


def main() -> None:
    args = parse_args()
    with workspace() as (workdir, processes):
        run(args, workdir, processes)


if __name__ == "__main__":
    main()
