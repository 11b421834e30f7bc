"""The tunnel benchmark's results (bench/tunnel.py): what was measured per peer, and the printed
table, ratios and goals, Lookout's drain and durability check, and the forwarder transports."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.harness.load import Load
from bench.harness.lookout import OUTBOX_CAP
from bench.harness.report import goal, versions
from bench.tunnel_peers import Peer

GOAL_VS_NGINX, GOAL_VS_NAIVE, GOAL_P99_MS = 0.25, 10.0, 15.0


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


def print_header(body_bytes: int, loadgen_label: str, args: argparse.Namespace) -> None:
    print(f"Tunnel benchmark: {body_bytes:,}-byte JavaScript error envelope (sentry.javascript.react, 20 frames),")
    print(f"  {args.connections} keep-alive connections, {args.seconds:g} s measured after {args.warmup:g} s warm-up,"
          f" load by {loadgen_label}.")
    print(f"  Machine: {os.cpu_count()} cores, shared by the load generator, the peer and the upstream"
          " (all on 127.0.0.1): compare rows, not absolute figures.")
    print("  Upstream: bench/upstream.py (bare RSGI app, granian 1 worker, own process), answers 200 {}.")
    print(f"  {versions()}.")
    print("  Lookout: SQLite outbox in a temp dir (WAL; synchronous=NORMAL, the default, and FULL in its own row),")
    print(f"  outbox cap {OUTBOX_CAP / 1024**3:g} GiB, forwarder in the same process.")
    print()


def print_table(peers: list[Peer], outcomes: dict[str, Outcome]) -> None:
    header = (f"{'peer':<36} {'accepted/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'non-2xx':>7} {'sock err':>8}"
              f"  {'CPU % peer/upstream/loadgen':>27}")
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


def print_transport_drains(count: int, drain: Callable[[str], tuple[float | None, int, str]]) -> None:
    """Runs `drain(transport)` → (envelopes/s or None, what upstream received, error) for each transport."""
    print()
    print(f"Forwarder drain of a pre-filled outbox ({count:,} envelopes; bench/drain.py, Forwarder alone,"
          " same upstream):")
    rates: dict[str, float] = {}
    for transport, label in (("httpx", "httpx default transport"), ("aiohttp", "httpx-aiohttp transport")):
        rate, got, error = drain(transport)
        if rate is None:
            print(f"  {label:<24}: failed ({error})")
            continue
        rates[transport] = rate
        check = "all delivered" if got >= count else f"only {got:,} delivered"
        print(f"  {label:<24}: {rate:8,.0f} envelopes/s  (upstream received {got:,}: {check})")
    if len(rates) == 2:
        print(f"  aiohttp / httpx        : {rates['aiohttp'] / rates['httpx']:.2f}×")
