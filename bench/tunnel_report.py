"""The tunnel benchmark's results (bench/tunnel.py): what was measured per peer, and the printed
table, ratios and goals (per run and their spread over the runs), Lookout's drain and durability
checks, the CPU of its threads, and the forwarder transports."""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from bench.harness.load import Load
from bench.harness.lookout import OUTBOX_CAP
from bench.harness.report import goal, versions
from bench.harness.threads import ThreadShare
from bench.tunnel_peers import Peer

# Issue 37: Lookout at least 0.4× nginx's rate with a p99 of at most 15 ms, in Sentry mode and for
# the local inbox's DSN alike; ≥ 10× the naive pass-through (issue 6).
GOAL_VS_NGINX, GOAL_VS_NAIVE, GOAL_P99_MS = 0.4, 10.0, 15.0
# The rows the goals are judged on, and their names in the ratio lines.
JUDGED = (("lookout", "Lookout"), ("lookout_local", "Lookout local"))


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
    threads: ThreadShare | None = None  # the server's CPU per request, by thread
    skipped: str = ""
    tunnel_accepted: int | None = None  # Lookout's own count of 200s
    forwarded_during_load: int | None = None
    drain: Drain | None = None
    left_in_outbox: int | None = None  # Sentry mode: rows not yet delivered once the process stopped
    local_rows: int | None = None  # local mode: rows committed for the inbox
    local_scrubbed: int | None = None  # ... of which the header says filtered and scrubbed before the write


def print_header(body_bytes: int, loadgen_label: str, args: argparse.Namespace) -> None:
    print(f"Tunnel benchmark: {body_bytes:,}-byte JavaScript error envelope (sentry.javascript.react, 20 frames),")
    print(f"  {args.connections} keep-alive connections, {args.seconds:g} s measured after {args.warmup:g} s warm-up,"
          f" load by {loadgen_label}; {args.runs} run{'s' if args.runs != 1 else ''} of every peer.")
    print(f"  Machine: {os.cpu_count()} cores, shared by the load generator, the peer and the upstream"
          " (all on 127.0.0.1): compare rows of one run, not absolute figures.")
    print("  Upstream: bench/upstream.py (bare RSGI app, granian 1 worker, own process), answers 200 {}.")
    print(f"  {versions()}.")
    print("  Lookout: SQLite outbox in a temp dir (WAL; synchronous=NORMAL, the default, and FULL in its own row),")
    print(f"  outbox cap {OUTBOX_CAP / 1024**3:g} GiB, forwarder in the same process; the local row in local mode")
    print("  (no SENTRY_DSN; its envelope names the inbox's DSN; filtered and scrubbed, Lookout's defaults, then committed).")
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


def _rate(outcomes: dict[str, Outcome], key: str) -> float | None:
    outcome = outcomes.get(key)
    return outcome.load.per_s if outcome is not None and outcome.load is not None and outcome.load.per_s else None


def print_ratios(outcomes: dict[str, Outcome]) -> None:
    """One run's ratios and p99 for each judged Lookout row, with the goals beside them."""
    for key, name in JUDGED:
        rate = _rate(outcomes, key)
        if rate is None:
            continue
        for other, other_name, target in (("nginx", "nginx", GOAL_VS_NGINX), ("naive", "naive httpx", GOAL_VS_NAIVE)):
            if (base := _rate(outcomes, other)) is not None:
                ratio = rate / base
                print(f"{name + ' / ' + other_name:<28} = {ratio:6.2f}×   ({goal(ratio, target, True)})")
            else:
                print(f"{name + ' / ' + other_name:<28} =    n/a   (peer skipped)")
        p99 = outcomes[key].load.p99_ms  # type: ignore[union-attr]
        print(f"{name + ' p99':<28} = {p99:6.2f} ms ({goal(p99, GOAL_P99_MS, False)})")
    print()


def print_lookout_details(peers: list[Peer], outcomes: dict[str, Outcome]) -> None:
    for peer in peers:
        outcome = outcomes[peer.key]
        if peer.db_path is None or outcome.load is None:
            continue
        print(f"{peer.label}:")
        if outcome.threads is not None:
            share = outcome.threads
            print(f"  CPU per envelope: {share.total_us:.0f} µs, of which the event loop's thread {share.main_us:.0f} µs"
                  f" ({100 * share.main_core_share:.0f} % of a core), the other threads {share.others_us:.0f} µs"
                  f" (busiest {share.busiest_other_us:.0f} µs).")
        if peer.local:
            _print_local_checks(outcome)
        else:
            _print_forwarding_checks(outcome)


def _print_forwarding_checks(outcome: Outcome) -> None:
    drain = outcome.drain
    if outcome.forwarded_during_load is not None and outcome.tunnel_accepted:
        print(f"  Forwarder during the load: {outcome.forwarded_during_load:,} of"
              f" {outcome.tunnel_accepted:,} accepted envelopes delivered"
              f" ({100 * outcome.forwarded_during_load / outcome.tunnel_accepted:.0f} %).")
    if drain is not None:
        if drain.left:
            print(f"  Outbox drain: {drain.left:,} of {drain.backlog:,} envelopes still pending after"
                  f" {drain.seconds:.0f} s (timed out).")
        elif drain.per_s is None:
            print("  Outbox drain: the outbox was empty when the load stopped (forwarder kept pace).")
        else:
            print(f"  Outbox drain: {drain.backlog:,} envelopes pending when the load stopped,"
                  f" emptied in {drain.seconds:.2f} s → {drain.per_s:,.0f} envelopes/s.")
        accepted = outcome.tunnel_accepted if outcome.tunnel_accepted is not None else outcome.accepted_total
        if outcome.loaded_seconds:
            total_s = outcome.loaded_seconds + drain.seconds
            print(f"  End to end: {accepted:,} envelopes accepted and delivered within {total_s:.1f} s of load"
                  f" + drain → {accepted / total_s:,.0f} envelopes/s sustained.")
    accepted = outcome.tunnel_accepted if outcome.tunnel_accepted is not None else outcome.accepted_total
    left = outcome.left_in_outbox or 0
    verdict = "OK" if outcome.upstream_got + left >= accepted else "LOST ENVELOPES"
    print(f"  Durability: the tunnel answered 200 for {accepted:,} envelopes (its own count; the load generator"
          f" saw {outcome.accepted_total:,}); upstream received {outcome.upstream_got:,}"
          f"{f' and {left:,} wait in the outbox' if left else ''} → {verdict}.")


def _print_local_checks(outcome: Outcome) -> None:
    accepted = outcome.tunnel_accepted if outcome.tunnel_accepted is not None else outcome.accepted_total
    rows, scrubbed = outcome.local_rows or 0, outcome.local_scrubbed or 0
    kept = "OK" if rows >= accepted else "LOST ENVELOPES"
    marked = "OK" if scrubbed == rows else "ROWS WRITTEN UNSCRUBBED"
    print(f"  Durability: the tunnel answered 200 for {accepted:,} envelopes (its own count; the load generator"
          f" saw {outcome.accepted_total:,}); the outbox holds {rows:,} rows for the inbox → {kept};"
          f" {scrubbed:,} of them filtered and scrubbed before the write → {marked}.")


def print_peer_checks(peers: list[Peer], outcomes: dict[str, Outcome]) -> None:
    for peer in peers:
        outcome = outcomes[peer.key]
        if peer.db_path is None and outcome.load is not None:
            print(f"{peer.key}: upstream received {outcome.upstream_got:,} for"
                  f" {outcome.accepted_total:,} 2xx answers (warm-up included).")


def _spread(values: Sequence[float], fmt: str) -> str:
    each = " ".join(format(value, fmt) for value in values)
    if len(values) == 1:
        return each
    return (f"{each}   median {format(statistics.median(values), fmt)}"
            f" ({format(min(values), fmt)}–{format(max(values), fmt)})")


def _verdict(values: Sequence[float], target: float, at_least: bool) -> str:
    """The goal judged on the median, and in how many runs it was met."""
    met = sum(value >= target if at_least else value <= target for value in values)
    verdict = goal(statistics.median(values), target, at_least)
    return verdict if len(values) == 1 else f"{verdict} on the median; met in {met} of {len(values)} runs"


def print_spread(peers: list[Peer], runs: list[dict[str, Outcome]]) -> None:
    """Every run's figures side by side, their median and range, and the goals judged on them."""
    if not runs:
        return
    print(f"Over {len(runs)} run{'s' if len(runs) != 1 else ''} (each run in order; median and min–max):")
    for peer in peers:
        loads = [outcomes[peer.key].load for outcomes in runs if outcomes.get(peer.key) is not None]
        measured = [load for load in loads if load is not None]
        if not measured:
            continue
        print(f"  {peer.label}")
        print(f"    accepted/s  {_spread([load.per_s for load in measured], ',.0f')}")
        print(f"    p99 ms      {_spread([load.p99_ms for load in measured], '.2f')}")
        shares = [outcomes[peer.key].threads for outcomes in runs]
        main = [share.main_us for share in shares if share is not None]
        if peer.db_path is not None and main:
            print(f"    CPU µs per envelope, event loop's thread  {_spread(main, '.0f')}")
    print()
    for key, name in JUDGED:
        per_run = [(_rate(outcomes, key), outcomes) for outcomes in runs]
        if all(rate is None for rate, _ in per_run):
            continue
        for other, other_name, target in (("nginx", "nginx", GOAL_VS_NGINX), ("naive", "naive httpx", GOAL_VS_NAIVE)):
            ratios = [rate / base for rate, outcomes in per_run
                      if rate is not None and (base := _rate(outcomes, other)) is not None]
            if ratios:
                print(f"{name + ' / ' + other_name:<28} {_spread(ratios, '.2f')}   ({_verdict(ratios, target, True)})")
        p99s = [outcomes[key].load.p99_ms for outcomes in runs  # type: ignore[union-attr]
                if outcomes.get(key) is not None and outcomes[key].load is not None]
        print(f"{name + ' p99 ms':<28} {_spread(p99s, '.2f')}   ({_verdict(p99s, GOAL_P99_MS, False)})")
    print()


def print_transport_drains(count: int, drain: Callable[[str], tuple[float | None, int, str]]) -> None:
    """Runs `drain(transport)` → (envelopes/s or None, what upstream received, error) for each transport."""
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
