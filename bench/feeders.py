"""Parallel feeders on PostgreSQL (issue 37): the inbox's rate with 1 and 2 feeder processes.

The outbox of a fresh database (a private cluster started as the tests start theirs,
tests/services.py) is filled with `--envelopes` local rows before anything is timed: bench/
triage_feeder.py's envelopes, half made by the real sentry-sdk (Python errors of 60 kinds, so that
every batch of 200 counts events into the same few dozen hot issues), half `@sentry/react` errors
(varied: a few hundred issues). Then N processes, each an `InboxFeeder` as a backend worker runs it
(on PostgreSQL every worker feeds, claiming its rows with `FOR UPDATE SKIP LOCKED`; scrubbing off,
as in the other feeder benchmarks), start together and call `feed_once` until no row is left unread;
timed from the start signal to the last one's end. The feeder counts alternate round by round (each
first in half of them) and each rate is the median of its rounds.

Printed per run: events/s; each feeder's CPU (user + system) and PostgreSQL's (its server process
and every backend, background workers included) as shares of one core over the run's wall time;
theirs together and the whole machine's (other processes too: this machine is shared) as shares of
its cores; their CPU per event; and per feeder the envelopes it wrote, those it set aside because
the other held one of their issues (each time), those whose issues it waited for, and the batches it
wrote again after losing a race (a deadlock, say). Then the medians and their ratio. Afterwards every
row must be read once, none rejected, every event stored once and each issue's count equal to its
stored events.

    .venv/bin/python -m bench.feeders [--envelopes 4000] [--rounds 3] [--feeders 1,2] [--mix triage|own-issues]

`--mix own-issues` gives each event an issue of its own (no two batches share one: what the claims
cost without the issues' contention).

Goal: 2 feeders ≥ 1.7 × the rate of 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy

from bench.harness.processes import ROOT
from bench.harness.report import goal
from tests import services

GOAL = 1.7
CLK_TCK = os.sysconf("SC_CLK_TCK")
LOCAL_DSN = "http://bench@localhost/1"


@dataclass(frozen=True)
class Run:
    feeders: int
    seconds: float
    envelopes: int
    feeder_cpu: list[float]  # per feeder process, seconds
    written: list[int]  # envelopes each feeder wrote
    aside: list[int]  # envelopes each set aside (another feeder held an issue of theirs), counted each time
    waited: list[int]  # envelopes set aside whose keys each waited for
    races: list[int]  # batches each wrote again after losing a race
    postgres_cpu: float
    machine_cpu: float  # the whole machine's busy CPU seconds over the run (other processes too)

    @property
    def per_s(self) -> float:
        return self.envelopes / self.seconds


def tree_cpu(root: int) -> float:
    """CPU seconds of process `root` and its children, live (utime + stime) or reaped (its cutime + cstime)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(stat.parent.name) == root:
            total += sum(int(f) for f in fields[11:15])
        elif int(fields[1]) == root:
            total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


def machine_cpu() -> float:
    """CPU seconds the whole machine has spent busy (all cores, /proc/stat: all but idle and iowait)."""
    fields = [int(f) for f in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / CLK_TCK


def child(url: str) -> None:
    """One feeder process: ready, then at "go" on stdin feed until nothing is left unread; its figures as JSON."""
    from app import db
    from app.ingest import store
    from app.ingest.feeder import UNREAD_IDS, InboxFeeder
    from bench.harness.feeding import unscrubbed
    from reflex_lookout.outbox import OutboxStore

    engine = db.engine(url)
    inbox = store.InboxStore(engine, scrubbing_of=unscrubbed)
    feeder = InboxFeeder(OutboxStore(engine), inbox)
    assert feeder.claims
    races = []

    class Counting(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            races.append(record.getMessage())

    store.logger.addHandler(Counting(logging.INFO))
    store.logger.setLevel(logging.INFO)
    with engine.connect() as connection:  # the connections made before the start
        connection.exec_driver_sql("select 1")
    print("ready", flush=True)
    sys.stdin.readline()
    cpu, aside = time.process_time(), 0
    while True:
        fed = feeder.feed_once()
        aside += len(feeder.set_aside)
        if fed:
            continue
        with engine.connect() as connection:  # none claimable: done, unless another feeder's batch fails
            if not connection.execute(UNREAD_IDS, {"limit": 1}).first():
                break
        time.sleep(0.01)
    print(json.dumps({"cpu": time.process_time() - cpu, "aside": aside, "waited": feeder.waited, "races": len(races),
                      "ingested": feeder.ingested, "rejected": feeder.rejected}), flush=True)
    engine.dispose()


def own_issues(bodies: list[bytes]) -> list[bytes]:
    """The envelopes with each event given a fingerprint of its own: every event a new issue, so that no
    two batches share one (what the feeders' claims cost without the issues' contention)."""
    from reflex_lookout.protocol import envelope

    changed = []
    for n, body in enumerate(bodies):
        parsed = envelope.parse(body, 10**8)
        items = []
        for item in parsed.items:
            if item.type == "event":
                event = json.loads(item.payload)
                event["fingerprint"] = [f"bench-{n}"]
                item = envelope.Item(item.type, {k: v for k, v in item.headers.items() if k != "length"},
                                     json.dumps(event).encode())
            items.append(item)
        changed.append(envelope.serialize(envelope.Envelope(parsed.headers, tuple(items))))
    return changed


def fill(url: str, bodies: list[bytes]) -> None:
    from app import db
    from app.ingest.feeder import BATCH
    from app.ingest.store import InboxStore
    from reflex_lookout.dsn import Dsn
    from reflex_lookout.outbox import LOCAL, OutboxStore, new_row

    engine = db.engine(url)
    InboxStore(engine).ensure_project(Dsn.parse(LOCAL_DSN))
    outbox = OutboxStore(engine)
    for at in range(0, len(bodies), BATCH):
        outbox.add_many([new_row(LOCAL_DSN, LOCAL, body, ["error"], None) for body in bodies[at:at + BATCH]])
    engine.dispose()


def check(url: str, envelopes: int) -> None:
    """Every row read once and none rejected; every event stored once; each issue's count its stored events."""
    engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.pool.NullPool)
    with engine.connect() as connection:
        def one(sql: str) -> object:
            return connection.exec_driver_sql(sql).scalar()
        read = one("select count(*) from inbox_read")
        rejected = one("select count(*) from outbox where status = 'rejected'")
        events, distinct = one("select count(*) from inbox_event"), one("select count(distinct event_id) from inbox_event")
        miscounted = one("select count(*) from inbox_issue i where event_count <>"
                         " (select count(*) from inbox_event e where e.issue_id = i.id)")
    engine.dispose()
    assert (read, rejected) == (envelopes, 0), (read, rejected)
    assert events == distinct == envelopes, (events, distinct)
    assert miscounted == 0, miscounted


def measure(server: services.Postgres, template: str, name: str, feeders: int, bodies: list[bytes]) -> Run:
    """One run: `bodies` written to the outbox of a fresh copy of `template`, then read by `feeders` processes."""
    envelopes = len(bodies)
    admin = sqlalchemy.create_engine(server.url(), isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.exec_driver_sql(f"CREATE DATABASE {name} TEMPLATE {template}")
    url = server.url(name)
    fill(url, bodies)
    with admin.connect() as connection:
        connection.exec_driver_sql("CHECKPOINT")
    processes = [subprocess.Popen([sys.executable, "-m", "bench.feeders", "--child", url], cwd=ROOT,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for _ in range(feeders)]
    try:
        for process in processes:
            assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        assert server.process is not None
        postgres_before, machine_before = tree_cpu(server.process.pid), machine_cpu()
        started = time.perf_counter()
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        figures = [json.loads(process.stdout.readline()) for process in processes if process.stdout is not None]
        seconds = time.perf_counter() - started
        postgres = tree_cpu(server.process.pid) - postgres_before
        machine = machine_cpu() - machine_before
        for process in processes:
            process.wait(30)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
    assert sum(f["ingested"] for f in figures) == envelopes and not any(f["rejected"] for f in figures), figures
    check(url, envelopes)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.dispose()
    return Run(feeders, seconds, envelopes, [f["cpu"] for f in figures], [f["ingested"] for f in figures],
               [f["aside"] for f in figures], [f["waited"] for f in figures], [f["races"] for f in figures], postgres,
               machine)



def report(runs: list[Run], counts: list[int]) -> None:
    """A line per run, in the order they ran, then the medians and the ratio against the goal."""
    print(f"\n{'feeders':>7}  {'events/s':>8}  {'CPU % of a core: each feeder':<28}  {'PostgreSQL':>10}  {'ours':>5}"
          f"  {'machine':>7}  {'CPU ms/event':>12}  per feeder: written / set aside / waited for / races")
    for run in runs:
        feeders = ", ".join(f"{cpu / run.seconds:.0%}" for cpu in run.feeder_cpu)
        ours = sum(run.feeder_cpu) + run.postgres_cpu
        counts_ = ", ".join(f"{w} / {a} / {n} / {r}" for w, a, n, r in zip(run.written, run.aside, run.waited, run.races,
                                                                            strict=True))
        print(f"{run.feeders:>7}  {run.per_s:>8.0f}  {feeders:<28}  {run.postgres_cpu / run.seconds:>10.0%}"
              f"  {ours / run.seconds / 2:>5.0%}  {run.machine_cpu / run.seconds / 2:>7.0%}"
              f"  {1000 * ours / run.envelopes:>12.2f}  {counts_}")
    print("(CPU as a share of one core over the run's wall time; ours: the feeders and PostgreSQL, and machine: every"
          " process, as shares of the 2 cores; CPU ms/event: the feeders' and PostgreSQL's)")
    medians = {count: statistics.median(run.per_s for run in runs if run.feeders == count) for count in counts}
    print("\n" + "; ".join(f"{count} feeder{'s' if count > 1 else ''}: median {rate:.0f} events/s"
                           for count, rate in medians.items()))
    if 1 in medians and 2 in medians:
        ratio = medians[2] / medians[1]
        print(f"2 feeders / 1 feeder = {ratio:.2f}×   ({goal(ratio, GOAL, at_least=True)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--envelopes", type=int, default=4000, help="rows in the outbox per run (default 4000)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per feeder count (default 3)")
    parser.add_argument("--feeders", default="1,2", help="feeder counts (default 1,2)")
    parser.add_argument("--mix", choices=("triage", "own-issues"), default="triage",
                        help="triage: bench/triage_feeder.py's envelopes (default); own-issues: the same, each event"
                             " an issue of its own")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    from app import db
    from bench import triage_feeder

    counts = [int(n) for n in args.feeders.split(",")]
    bodies = triage_feeder.envelopes(args.envelopes)
    if args.mix == "own-issues":
        bodies = own_issues(bodies)
    with services.postgres() as server:
        template = "feeders_template"
        admin = sqlalchemy.create_engine(server.url(), isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
        with admin.connect() as connection:
            connection.exec_driver_sql(f"CREATE DATABASE {template}")
        engine = db.engine(server.url(template))
        db.migrate(engine)
        engine.dispose()
        admin.dispose()
        print(f"{args.envelopes} envelopes ({args.mix}), {args.rounds} rounds, load average {os.getloadavg()[0]:.1f}"
              f" {os.getloadavg()[1]:.1f} {os.getloadavg()[2]:.1f} ({os.cpu_count()} cores)", flush=True)
        runs = []
        measure(server, template, "feeders_warmup", 1, bodies)  # first-use costs out of the rounds
        for round_ in range(args.rounds):
            for count in counts if round_ % 2 == 0 else counts[::-1]:
                run = measure(server, template, f"feeders_{round_}_{count}", count, bodies)
                print(f"  round {round_ + 1}, {count} feeder(s): {run.per_s:.0f} events/s", flush=True)
                runs.append(run)
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    report(runs, counts)


if __name__ == "__main__":
    main()
