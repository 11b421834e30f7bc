"""Benchmark of Lookout's Sentry tunnel against nginx and a naive httpx pass-through.

    .venv/bin/python -m bench.tunnel [--runs 3] [--seconds 10] [--warmup 2] [--connections 32] [--drain-count 5000]

Three peers receive the same 6–7 KB browser error envelope from the same load generator (wrk, or
bench/loadgen.py without it) and deliver to the same loopback upstream (bench/upstream.py, a
process of its own); Lookout is measured in four rows, one of them in local mode (the envelope
naming the embedded inbox's DSN: filtered and scrubbed, then committed for the inbox). Each peer
runs alone: started, warmed up, measured, stopped; each run measures every peer once, in a fresh
directory, and the ratios are taken within a run. Everything listens on 127.0.0.1 and is torn down
at the end. Prints each run's table, then the spread over the runs; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench import envelope
from bench.harness.load import Load, LoadGenerator, load_generator
from bench.harness.lookout import local_rows, outbox_rows
from bench.harness.processes import ROOT, Processes, workspace
from bench.harness.servers import HOST, free_port, granian, http, wait_ready
from bench.harness.threads import ThreadCpu, thread_share
from bench.tunnel_peers import LOCAL_DSN, PEERS, PROJECT_ID, Peer, chosen_peers
from bench.tunnel_report import (
    Drain,
    Outcome,
    print_header,
    print_lookout_details,
    print_peer_checks,
    print_ratios,
    print_spread,
    print_table,
    print_transport_drains,
)

DRAIN_TIMEOUT_S = 300.0


class Bench:
    """The upstream, the load generators, and measuring one peer at a time against them."""

    def __init__(self, args: argparse.Namespace, workdir: Path, processes: Processes) -> None:
        self.args = args
        self.workdir = workdir
        self.processes = processes
        self.upstream_port = free_port()
        self.dsn = f"http://public@{HOST}:{self.upstream_port}/{PROJECT_ID}"
        self.body = envelope.build(self.dsn)
        python = args.loadgen == "python"
        self.loadgen = load_generator(workdir, self.body, args.connections, python=python)
        # The same envelope naming the embedded inbox's DSN, for the local-mode row.
        self.local_loadgen = load_generator(workdir, envelope.build(LOCAL_DSN), args.connections, python=python,
                                            name="envelope-local")

    def start_upstream(self) -> None:
        self.processes.start("upstream", granian("bench.upstream:app", self.upstream_port, "rsgi"))
        wait_ready(self.processes, "upstream", self.upstream_port, "/count")

    def upstream_count(self) -> int:
        return int(json.loads(http("GET", self.upstream_port, "/count")[1])["envelopes"])

    def reset_upstream(self) -> None:
        http("POST", self.upstream_port, "/reset")

    def measure(self, peer: Peer, drain: bool) -> Outcome:
        """One peer: warm-up, the measured load, then its checks. `drain`: time the outbox's drain
        after the load (Sentry-mode Lookout rows; else the rows still there are counted)."""
        outcome = Outcome()
        loadgen: LoadGenerator = self.local_loadgen if peer.local else self.loadgen
        process = self.processes.start(peer.key, peer.argv, peer.env)
        try:
            wait_ready(self.processes, peer.key, peer.port, peer.ready_path)
            self.reset_upstream()
            warmup = loadgen.run(peer.port, self.args.warmup)[0] if self.args.warmup else Load(0, 0, 0, 0, 0, 0)
            cpu_before = {name: self.processes.cpu_seconds(name) for name in (peer.key, "upstream")}
            threads_before = ThreadCpu.of_group(process.pid)
            load, loadgen_cpu = loadgen.run(peer.port, self.args.seconds)
            threads_used = ThreadCpu.of_group(process.pid).since(threads_before)
            outcome.cpu = {
                name: 100 * (self.processes.cpu_seconds(name) - before) / load.seconds
                for name, before in cpu_before.items()
            }
            outcome.cpu["loadgen"] = 100 * loadgen_cpu / load.seconds
            outcome.threads = thread_share(threads_used, load.requests, load.seconds)
            outcome.load = load
            outcome.accepted_total = warmup.accepted + load.accepted
            outcome.loaded_seconds = warmup.seconds + load.seconds
            if peer.db_path is not None:
                self.lookout_after_load(peer, outcome, drain)
            else:
                time.sleep(0.2)  # answers cut off by the generator's deadline may still be in flight
            outcome.upstream_got = self.upstream_count()
        finally:
            self.processes.stop(peer.key)
        if peer.db_path is not None and outcome.load is not None:
            if peer.local:
                outcome.local_rows, outcome.local_scrubbed = local_rows(peer.db_path)
            else:  # counted once the process is gone: nothing is being delivered or deleted any more
                outcome.upstream_got = self.upstream_count()
                outcome.left_in_outbox = outbox_rows(peer.db_path)
        return outcome

    def lookout_after_load(self, peer: Peer, outcome: Outcome, drain: bool) -> None:
        assert peer.db_path is not None
        stats = json.loads(http("GET", peer.port, "/monitoring/stats")[1])
        outcome.forwarded_during_load = None if peer.local else int(stats["forwarded"])
        if drain and not peer.local:
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
    parser.add_argument("--runs", type=int, default=3,
                        help="runs of every peer, each printed, then their spread (default 3)")
    parser.add_argument("--seconds", type=int, default=10, help="measured load per peer, whole seconds (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up load per peer, whole seconds (default 2)")
    parser.add_argument("--connections", type=int, default=32, help="concurrent keep-alive connections")
    parser.add_argument("--drain-count", type=int, default=5000,
                        help="envelopes in the pre-filled outbox of the transport comparison (0: skip it)")
    parser.add_argument("--no-outbox-drain", action="store_true",
                        help="skip timing the Lookout row's outbox drain after run 1's load (~1 min); "
                             "durability is then checked on the rows left")
    parser.add_argument("--nginx-workers", default="1", help="nginx worker_processes: 1 (default) or auto")
    parser.add_argument("--loadgen", choices=["auto", "python"], default="auto",
                        help="auto: wrk when available; python: bench/loadgen.py")
    parser.add_argument("--peers", default=",".join(PEERS), help="comma-separated subset to run")
    args = parser.parse_args()
    if not (0 < args.seconds <= 600 and 0 <= args.warmup <= 60 and 1 <= args.connections <= 1024
            and 1 <= args.runs <= 20):
        parser.error("keep --seconds in (0, 600], --warmup in [0, 60], --connections in [1, 1024], --runs in [1, 20]")
    unknown = set(args.peers.split(",")) - set(PEERS)
    if unknown:
        parser.error(f"unknown peers: {', '.join(sorted(unknown))} (choose from {', '.join(PEERS)})")
    return args


def run(args: argparse.Namespace, workdir: Path, processes: Processes) -> None:
    workdir.chmod(0o755)  # nginx workers run as an unprivileged user
    bench = Bench(args, workdir, processes)
    bench.start_upstream()
    print_header(len(bench.body), bench.loadgen.label, args)
    runs: list[dict[str, Outcome]] = []
    peers: list[Peer] = []
    for number in range(1, args.runs + 1):
        run_dir = workdir / f"run{number}"
        run_dir.mkdir(mode=0o755)
        peers, skipped = chosen_peers(args.peers.split(","), run_dir, bench.dsn, bench.upstream_port,
                                      args.nginx_workers)
        outcomes = {key: Outcome(skipped=why) for key, why in skipped.items()}
        print(f"Run {number} of {args.runs}")
        for peer in peers:
            print(f"  measuring {peer.label} ...", flush=True)
            drain = number == 1 and peer.key == "lookout" and not args.no_outbox_drain
            outcomes[peer.key] = bench.measure(peer, drain)
        print()
        print_table(peers, outcomes)
        print_ratios(outcomes)
        print_lookout_details(peers, outcomes)
        print_peer_checks(peers, outcomes)
        print()
        runs.append(outcomes)
    print_spread(peers, runs)
    if args.drain_count > 0:
        print_transport_drains(args.drain_count, bench.transport_drain)


def main() -> None:
    args = parse_args()
    with workspace() as (workdir, processes):
        run(args, workdir, processes)


if __name__ == "__main__":
    main()
