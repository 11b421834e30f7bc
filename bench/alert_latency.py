"""Alert latency: from an event's acceptance at the ingest endpoint to its alert's arrival at a
webhook receiver, over 200 new issues; Lookout and Bugsink in the same run, on this machine.

    .venv/bin/python -m bench.alert_latency [--issues 200] [--gap-ms 250] [--concurrency 8] [--pace 0]
                                            [--peers lookout,lookout-repaced,bugsink-eager,bugsink-snappea]

An event is a Sentry error event posted to `POST /api/<project>/store/?sentry_key=...`; its
acceptance is when its 200 answer reached the client. Each event is a new issue: its exception
value carries a token of letters (grouping turns digits into <int>), which the alert's title
repeats, so each alert is matched to its event by title. Latency = arrival − acceptance (a repeated
alert counts once, at its first arrival); "from the request's start" = arrival − when it was sent.
Two patterns, each on a fresh server and database, after a warm-up whose alerts are awaited:
- spaced: one new issue every `--gap-ms`, each on its own schedule (a slow answer delays no other);
- burst: all at once, `--concurrency` keep-alive clients posting back to back.

The receiver is a stdlib HTTP server in a process of its own (in a thread of this process the
posting clients would hold the GIL while an alert waits to be read): it answers 200 "ok" and
writes each request's arrival (`time.time()` once its body is read) and body to a file.

Peers:
- lookout: `app.standalone.inbox:app` (ingest endpoints, outbox, feeder and alert sender in one
  process) under granian, 1 worker, SQLite in a temp dir; one `json` channel from
  LOOKOUT_ALERT_WEBHOOKS, LOOKOUT_WEBHOOK_ALLOW=127.0.0.1. Its body lists `alerts[]`, each with
  `issue.title`. The sender paces each channel (app/alerts/pacing.py: PACE_BURST messages at once,
  then one every PACE_EVERY_S, each a digest of what is due): after the warm-up the run waits until
  the bucket is full again.
- lookout-repaced: the same with the sender's PACE_EVERY_S set to `--pace` (0: no pacing) by a
  granian factory in this file, to tell what the pacing costs from what the pipeline costs.
- bugsink-eager / bugsink-snappea (Bugsink from bench/bugsink-requirements.txt, in
  bench/.bugsink-venv, made on first use): gunicorn with `bugsink.wsgi`, `--bugsink-workers` sync
  workers, the `local` configuration template, a project with a Slack messaging config pointing at
  the receiver. Bugsink refuses a loopback webhook unless ALERTS_WEBHOOK_DENY_NON_GLOBAL is False
  (its allow list only counts in `allowlist_only` mode), so it is set so. The Slack body's first
  block is the issue's title.
  - eager (`SNAPPEA.TASK_ALWAYS_EAGER`, as the local template sets): the ingest request digests
    the event and posts the alert before it answers: the alert arrives before the acceptance (a
    latency below 0), and each request waits for the receiver.
  - snappea (as its singleserver template, for production): the request stores the event and
    answers; `bugsink-runsnappea` (4 worker threads, woken through inotify) digests it, which
    queues the alert task, which queues the Slack task, which posts.

Prints figures and ratios; asserts nothing. About 5–6 minutes with the defaults: each spaced run
takes issues × gap.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from app.alerts.messages import DIGEST_LIMIT
from app.alerts.pacing import PACE_BURST, PACE_EVERY_S
from bench import bugsink_alerts
from bench.alert_receiver import Receiver, lookout_titles, slack_titles
from bench.alert_report import Outcome, print_ratios, print_table, print_timelines
from bench.harness.processes import Processes, workspace
from bench.harness.servers import HOST, free_port, granian, wait_ready

LOCAL_DSN = "http://bench@localhost/1"
PEERS = ("lookout", "lookout-repaced", "bugsink-eager", "bugsink-snappea")
DEFAULT_PEERS = ",".join(PEERS)
LABELS = {"lookout": "Lookout", "bugsink-eager": "Bugsink, eager", "bugsink-snappea": "Bugsink, snappea"}

def token(n: int) -> str:
    """Letters only: Lookout's grouping turns digits into <int>, so "alert 7" and "alert 8" would be one issue."""
    letters = ""
    for _ in range(4):
        n, digit = divmod(n, 26)
        letters = chr(ord("a") + digit) + letters
    return letters


def event(name: str) -> bytes:
    return json.dumps({
        "event_id": uuid.uuid4().hex, "timestamp": time.time(), "level": "error", "platform": "python",
        "environment": "production", "release": "bench@1",
        "exception": {"values": [{"type": "BenchAlertError", "value": f"bench alert {name}", "stacktrace": {"frames": [
            {"module": "bench.worker", "function": "handle", "filename": "bench/worker.py", "lineno": 42,
             "in_app": True}]}}]},
    }).encode()


# --- posting --------------------------------------------------------------------------------------


@dataclass
class Posted:
    sent: dict[str, float] = field(default_factory=dict)
    accepted: dict[str, float] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)


async def post_one(client: httpx.AsyncClient, url: str, name: str, posted: Posted) -> None:
    posted.sent[name] = time.time()
    answer = await client.post(url, content=event(name), headers={"Content-Type": "application/json"})
    if answer.status_code == 200:
        posted.accepted[name] = time.time()
    else:
        posted.refused.append(f"{name}: {answer.status_code} {answer.text[:200]!r}")


async def post_spaced(url: str, names: list[str], gap_s: float) -> Posted:
    posted = Posted()
    limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
    async with httpx.AsyncClient(limits=limits, trust_env=False, timeout=60.0) as client:
        start, tasks = time.monotonic(), []
        for n, name in enumerate(names):
            await asyncio.sleep(max(0.0, start + n * gap_s - time.monotonic()))
            tasks.append(asyncio.create_task(post_one(client, url, name, posted)))
        await asyncio.gather(*tasks)
    return posted


async def post_burst(url: str, names: list[str], concurrency: int) -> Posted:
    posted, pending = Posted(), iter(names)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, trust_env=False, timeout=60.0) as client:
        async def worker() -> None:
            for name in pending:
                await post_one(client, url, name, posted)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return posted


# --- one peer, one pattern ------------------------------------------------------------------------


@dataclass(frozen=True)
class Server:
    """A started peer: where to post, the receiver's path its alerts go to, how to read their titles."""

    store_url: str
    path: str
    titles: Callable[[dict], list[str]]
    warmup: int = 1  # events posted at once before measuring
    settle_s: float = 0.0  # wait this long per warm-up message before measuring


def warm_up(server: Server, receiver: Receiver) -> set[str]:
    """`server.warmup` events at once (a cold worker's first request is slow); once their alerts have
    come, wait while a paced sender's bucket fills up again. The warm-up's tokens."""
    warm = {f"warm{token(n)}" for n in range(server.warmup)}
    asyncio.run(post_burst(server.store_url, sorted(warm), server.warmup))
    messages = receiver.wait(server.path, server.titles, warm, idle_s=30, limit_s=90)
    time.sleep(server.settle_s * len(messages) + 0.5)
    return warm


def measure(peer: str, pattern: str, server: Server, receiver: Receiver, args: argparse.Namespace) -> Outcome:
    warm = warm_up(server, receiver)
    names = [token(n) for n in range(args.issues)]
    if pattern == "spaced":
        posted = asyncio.run(post_spaced(server.store_url, names, args.gap_ms / 1000))
    else:
        posted = asyncio.run(post_burst(server.store_url, names, args.concurrency))
    messages = [m for m in receiver.wait(server.path, server.titles, set(posted.accepted), args.idle, args.limit)
                if not warm & set(m.tokens)]
    arrival: dict[str, float] = {}
    for message in sorted(messages, key=lambda m: m.at):
        for name in message.tokens:
            arrival.setdefault(name, message.at)
    matched = [name for name in names if name in arrival and name in posted.accepted]
    first = min(posted.accepted.values(), default=0.0)
    return Outcome(
        peer, label(peer, args), pattern, len(names), posted.refused,
        [arrival[name] - posted.accepted[name] for name in matched],
        [arrival[name] - posted.sent[name] for name in matched],
        [(m.at - first, len(m.tokens)) for m in sorted(messages, key=lambda m: m.at)])


def label(peer: str, args: argparse.Namespace) -> str:
    if peer == "lookout-repaced":
        return f"Lookout, {f'1 per {args.pace:g} s' if args.pace else 'unpaced'}"
    return LABELS[peer]


def repaced_app() -> object:
    """granian `--factory` target: app.standalone.inbox with the sender's pacing changed to a token
    every BENCH_PACE_EVERY_S seconds (0: at once, no pacing), to tell what pacing costs from what
    the pipeline costs."""
    from app.alerts import pacing
    from app.standalone.inbox import app

    pacing.PACE_EVERY_S = float(os.environ["BENCH_PACE_EVERY_S"]) or 1e-9
    return app


def start_lookout(processes: Processes, workdir: Path, receiver: Receiver, path: str, pace_s: float | None) -> Server:
    """`pace_s`: None, as shipped; else a token every `pace_s` (0: none)."""
    port = free_port()
    env = {"DATABASE_URL": f"sqlite:///{workdir / 'lookout.db'}", "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN,
           "LOOKOUT_ALERT_WEBHOOKS": f"json={receiver.url(path)}#secret=x", "LOOKOUT_WEBHOOK_ALLOW": HOST,
           "LOOKOUT_SERVER_MONITORING": "off", "BENCH_PACE_EVERY_S": str(pace_s or 0)}
    target = granian("app.standalone.inbox:app", port) if pace_s is None else [
        *granian("bench.alert_latency:repaced_app", port), "--factory"]
    processes.start("lookout", target, env)
    wait_ready(processes, "lookout", port, "/")
    return Server(f"http://{HOST}:{port}/api/1/store/?sentry_key=bench", path, lookout_titles,
                  settle_s=PACE_EVERY_S if pace_s is None else pace_s)


def start_bugsink(processes: Processes, workdir: Path, cache: Path, receiver: Receiver, path: str, eager: bool,
                  workers: int) -> Server:
    url = bugsink_alerts.start(processes, workdir, cache, receiver.url(path), eager, workers)
    return Server(url, path, slack_titles, warmup=2 * workers)


def run(peer: str, pattern: str, receiver: Receiver, cache: Path, args: argparse.Namespace) -> Outcome:
    with tempfile.TemporaryDirectory(prefix=f"lookout-alert-{peer}-") as tmp:
        workdir, path = Path(tmp), f"/{peer}/{pattern}"
        processes = Processes(workdir)
        try:
            if peer.startswith("lookout"):
                server = start_lookout(processes, workdir, receiver, path, None if peer == "lookout" else args.pace)
            else:
                server = start_bugsink(processes, workdir, cache, receiver, path, peer == "bugsink-eager",
                                       args.bugsink_workers)
            return measure(peer, pattern, server, receiver, args)
        except Exception:
            for name in processes.running:
                print(f"--- {name} log:\n{processes.log_tail(name, 30)}", file=sys.stderr)
            raise
        finally:
            processes.stop_all()


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--issues", type=int, default=200, help="new issues per pattern (default 200)")
    parser.add_argument("--gap-ms", type=float, default=250.0, help="spaced pattern: ms between events (default 250)")
    parser.add_argument("--concurrency", type=int, default=8, help="burst pattern: clients at once (default 8)")
    parser.add_argument("--peers", default=DEFAULT_PEERS, help=f"comma-separated, of {', '.join(PEERS)} "
                        f"(default {DEFAULT_PEERS})")
    parser.add_argument("--patterns", default="spaced,burst", help="comma-separated, of spaced, burst")
    parser.add_argument("--pace", type=float, default=0.0,
                        help="lookout-repaced: a channel's token comes back every PACE s (default 0: no pacing)")
    parser.add_argument("--bugsink-workers", type=int, default=4, help="gunicorn sync workers (default 4)")
    parser.add_argument("--idle", type=float, default=30.0, help="stop waiting for alerts after s without any")
    parser.add_argument("--limit", type=float, default=120.0, help="stop waiting for alerts after s in all")
    args = parser.parse_args()
    for peer in args.peers.split(","):
        if peer not in PEERS:
            parser.error(f"unknown peer {peer!r}: choose among {', '.join(PEERS)}")
    for pattern in args.patterns.split(","):
        if pattern not in ("spaced", "burst"):
            parser.error(f"unknown pattern {pattern!r}: spaced or burst")
    return args


def main() -> None:
    args = parse_args()
    peers, patterns = args.peers.split(","), args.patterns.split(",")
    print(f"Alert latency: {args.issues} new issues per pattern, spaced (one every {args.gap_ms:g} ms) and burst "
          f"({args.concurrency} clients at once);\n  webhook receiver: stdlib HTTP server in its own process on "
          f"{HOST}; Bugsink {bugsink_alerts.bugsink_version()} with {args.bugsink_workers} gunicorn workers.\n"
          f"  Lookout paces each channel: {PACE_BURST} messages at once, then one every {PACE_EVERY_S:g} s, "
          f"each listing what is due (a json message up to {DIGEST_LIMIT['json']} alerts).", flush=True)
    outcomes, start = [], time.monotonic()
    with workspace() as (workdir, processes):
        receiver = Receiver(processes, workdir)
        for peer in peers:
            for pattern in patterns:
                print(f"  {label(peer, args)}, {pattern} ...", flush=True)
                outcomes.append(run(peer, pattern, receiver, workdir, args))
    print_table(outcomes)
    print_timelines(outcomes)
    print_ratios(outcomes)
    print(f"\n({time.monotonic() - start:.0f} s in all)")


if __name__ == "__main__":
    main()
