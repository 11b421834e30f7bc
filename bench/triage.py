"""Issue search at scale, and what the tag index costs the feeder (issue 23).

Search: an inbox of `--events` events in `--issues` issues with 30 tag keys (bench/triage_data.py:
Zipf-like issue sizes, tag values of varied cardinality, the tag index counted as ingest counts it),
written with bulk inserts into a SQLite file and into PostgreSQL (a private cluster, started as the
tests start theirs: tests/services.py). Then 20 searches as people make them, through the console's
and the API's one engine (`app.inbox.search.engine.IssueSearch`), `--runs` times each after one
warm-up, the queries in turn: per query p50 and p95, and the p95 of every timing, against the goal;
beside them its CPU time (this process's and the database server's processes'), which a busy
machine does not stretch. A query whose p95 misses the goal is run once more with its statements
timed, and the slowest one's plan is printed (EXPLAIN QUERY PLAN; EXPLAIN ANALYZE on PostgreSQL).

Feeder: `--feeder-events` sentry-sdk-like envelopes through the feeder into fresh databases, with the
tag index and without it, `--rounds` times (bench/triage_feeder.py); the index's cost is
1 − median(with) / median(without).

    .venv/bin/python -m bench.triage [--events 1000000] [--issues 100000] [--runs 10] [--feeder-events 5000]
                                     [--rounds 3] [--databases sqlite,postgresql] [--keep DIR] [--quick]

Goals (issue 23): p95 ≤ 100 ms over the 20 queries on each database; the index costs ≤ 15 % of the
feeder's rate. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

import sqlalchemy

from app import db
from app.inbox.search.engine import IssueSearch
from app.inbox.search.terms import SearchError
from app.inbox.short_ids import short_id
from bench import triage_data, triage_feeder
from bench.harness.processes import CLK_TCK
from bench.harness.report import goal
from bench.harness.stats import percentile
from tests import services

GOAL_MS, COST_GOAL, LAG_GOAL = 100.0, 0.15, 2.0  # search p95; the index's share of the feeder; its lag (p95, s)
VIEWER = triage_data.ASSIGNEES[1]


class Search(NamedTuple):
    label: str
    text: str
    sort: str = "date"
    offset: int = 0


def searches(facts: triage_data.Facts) -> list[Search]:
    """20 searches as people make them, on what `facts` says the inbox holds."""
    return [
        Search("default", "is:unresolved"),
        Search("level", "is:unresolved level:error"),
        Search("environment, latest release", "is:unresolved environment:production release:latest"),
        Search("browser, not os", "is:unresolved browser.name:Chrome !os.name:Windows"),
        Search("user id", "user.id:1234"),
        Search("has", "is:unresolved has:user.email"),
        Search("times seen", "timesSeen:>100"),
        Search("age", "age:-24h"),
        Search("last seen", "is:unresolved lastSeen:+7d"),
        Search("free text", "timeout"),
        Search("quoted phrase", '"connection reset"'),
        Search("wildcard", "url:*/checkout*"),
        Search("release list", f"release:[{triage_data.RELEASES[-2]}, {triage_data.RELEASES[-3]}]"),
        Search("assigned", "is:assigned"),
        Search("event id", facts.event_id),
        Search("short id", short_id(triage_data.PROJECT[1], facts.issue_id)),
        Search("sort new", "is:unresolved", sort="new"),
        Search("sort freq", "is:unresolved", sort="freq"),
        Search("page 40", "is:unresolved", offset=39 * 25),
        Search("four tags", "is:unresolved environment:production customer.tier:enterprise handled:no !has:device"),
    ]


class Statements:
    """The statements run on `engine` while `capturing`, each with its parameters and seconds."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.seen: list[tuple[str, Any, float]] = []
        self.on, self._started = False, 0.0
        sqlalchemy.event.listen(engine, "before_cursor_execute", self._before)
        sqlalchemy.event.listen(engine, "after_cursor_execute", self._after)

    def _before(self, *_: Any) -> None:
        self._started = time.perf_counter()

    def _after(self, _conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        if self.on:
            self.seen.append((statement, parameters, time.perf_counter() - self._started))

    @contextlib.contextmanager
    def capturing(self) -> Iterator[list[tuple[str, Any, float]]]:
        self.seen, self.on = [], True
        try:
            yield self.seen
        finally:
            self.on = False


def time_searches(engine: sqlalchemy.Engine, facts: triage_data.Facts, runs: int,
                  server_cpu: Callable[[], float]) -> dict[Search, list[tuple[float, float]]]:
    """Milliseconds per search, wall and CPU (this thread's, and the database server's: `server_cpu()`,
    seconds so far), `runs` each after a warm-up, the searches in turn (one the engine refuses is left out)."""
    engine_search, wanted = IssueSearch(engine), searches(facts)
    timings: dict[Search, list[tuple[float, float]]] = {search: [] for search in wanted}
    for search in list(wanted):
        try:
            engine_search.search(search.text, viewer=VIEWER, sort=search.sort, offset=search.offset, now=facts.now)
        except SearchError as exc:
            print(f"  {search.label}: refused: {exc}")
            wanted.remove(search)
            del timings[search]
    for _ in range(runs):
        for search in wanted:
            server, client = server_cpu(), time.thread_time()
            started = time.perf_counter()
            engine_search.search(search.text, viewer=VIEWER, sort=search.sort, offset=search.offset, now=facts.now)
            wall = time.perf_counter() - started
            client = time.thread_time() - client
            timings[search].append((wall * 1000, (client + server_cpu() - server) * 1000))
    return timings


def explain(engine: sqlalchemy.Engine, statements: Statements, search: Search, facts: triage_data.Facts) -> str:
    """The slowest statement of one more run of `search`, with its time and plan."""
    with statements.capturing() as seen:
        IssueSearch(engine).search(search.text, viewer=VIEWER, sort=search.sort, offset=search.offset, now=facts.now)
    statement, parameters, seconds = max(seen, key=lambda found: found[2])
    prefix = "EXPLAIN QUERY PLAN " if engine.dialect.name == "sqlite" else "EXPLAIN (ANALYZE, BUFFERS) "
    with engine.connect() as connection:
        plan = connection.exec_driver_sql(prefix + statement, parameters).all()
    lines = [str(row[0]) if engine.dialect.name == "postgresql" else f"{row[0]}/{row[1]}: {row[3]}" for row in plan]
    flat = " ".join(statement.split())
    return (f"    slowest statement ({seconds * 1000:.1f} ms of {len(seen)}): {flat[:600]}\n    parameters: {parameters}\n"
            + "\n".join(f"      {line}" for line in lines))


def report_searches(name: str, engine: sqlalchemy.Engine, facts: triage_data.Facts, runs: int,
                    server_cpu: Callable[[], float]) -> None:
    timed = time_searches(engine, facts, runs, server_cpu)
    timings = {search: [wall for wall, _ in both] for search, both in timed.items()}
    print(f"\n{name}: {runs} runs per search\n{'search':<30}{'p50 ms':>9}{'p95 ms':>9}{'CPU ms':>9}  query")
    for search, ms in timings.items():
        sort = f"  (sort {search.sort})" if search.sort != "date" else f"  (offset {search.offset})" if search.offset else ""
        p50, p95, used = statistics.median(ms), percentile(ms, 0.95), statistics.mean(c for _, c in timed[search])
        print(f"{search.label:<30}{p50:>9.1f}{p95:>9.1f}{used:>9.1f}  {search.text[:58]}{sort}")
    every = [one for ms in timings.values() for one in ms]
    overall = percentile(every, 0.95)
    print(f"{name}: p95 of all {len(every)} timings = {overall:.1f} ms   ({goal(overall, GOAL_MS, at_least=False)})")
    slowest = max(statistics.mean(c for _, c in both) for both in timed.values())
    print(f"{name}: CPU ms: the mean of each search's runs, this process's and the database's (what an idle machine would"
          f" take, about); the most, {slowest:.1f} ms")
    missed = [search for search, ms in timings.items() if percentile(ms, 0.95) > GOAL_MS]
    statements = Statements(engine) if missed else None
    for search in missed:
        assert statements is not None
        print(f"  over {GOAL_MS:g} ms: {search.label} ({search.text})\n{explain(engine, statements, search, facts)}")


def build_and_search(name: str, url: str, args: argparse.Namespace, kept: Path | None = None,
                     server: services.Postgres | None = None) -> None:
    """Build the inbox at `url` (or reuse `kept`, the facts of a SQLite file built before), then time the
    searches (the CPU time of `server`'s processes too)."""
    engine = db.engine(url)
    if kept is not None and kept.exists():
        facts = triage_data.Facts(**json.loads(kept.read_text()))
        print(f"\n{name}: the inbox built before, {url}", flush=True)
    else:
        db.migrate(engine)
        print(f"\n{name}: writing {args.events:,} events in {args.issues:,} issues ...", flush=True)
        started = time.monotonic()
        facts = triage_data.build(url, args.events, args.issues)
        print(f"  written in {time.monotonic() - started:.0f} s", flush=True)
        if kept is not None:
            kept.write_text(json.dumps(dataclasses.asdict(facts)))
        engine.dispose()  # the load ran on a connection of its own: start afresh
    print(f"  load average {' '.join(f'{n:.1f}' for n in os.getloadavg())} ({os.cpu_count()} cores)", flush=True)
    postmaster = server.process.pid if server is not None and server.process is not None else None
    report_searches(name, engine, facts, args.runs, (lambda: 0.0) if postmaster is None else lambda: server_cpu(postmaster))


def report_feeder(name: str, make_url: Callable[[str], str], bodies: list[bytes], rounds: int,
                  per_second: int) -> None:
    with_index, without = triage_feeder.rates(make_url, bodies, rounds)
    shown = ", ".join(f"{a.rate:,.0f} / {b:,.0f}" for a, b in zip(with_index, without, strict=True))
    cost = triage_feeder.cost(with_index, without)
    print(f"\n{name}: the feeder, {len(bodies):,} envelopes, events/s with / without the tag index per round: {shown}")
    print(f"{name}: the tag counter beside it had counted everything "
          f"{', '.join(f'{fed.counted_after_s:.2f}' for fed in with_index)} s after the feeder's last batch")
    met = "met" if cost <= COST_GOAL else "NOT met"
    print(f"{name}: median {statistics.median(fed.rate for fed in with_index):,.0f} / {statistics.median(without):,.0f} "
          f"events/s: the index costs {cost:.1%} of the rate   (goal ≤ {COST_GOAL:.0%}: {met})")
    if per_second:
        seconds = min(len(bodies), per_second * 10) / per_second
        lags = triage_feeder.lag(make_url("feeder_lag"), bodies[:int(per_second * seconds)], per_second)
        p95 = statistics.quantiles(lags, n=20)[-1]
        print(f"{name}: {per_second} events/s for {seconds:.0f} s, from the commit to the outbox until counted in the index: "
              f"p50 {statistics.median(lags):.2f} s, p95 {p95:.2f} s, max {max(lags):.2f} s   "
              f"(goal p95 ≤ {LAG_GOAL:.0f} s: {'met' if p95 <= LAG_GOAL else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events searched (0: skip the search)")
    parser.add_argument("--issues", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=10, help="timed runs per search (default 10)")
    parser.add_argument("--feeder-events", type=int, default=5000, help="envelopes fed per variant (0: skip)")
    parser.add_argument("--rounds", type=int, default=3, help="feeder rounds, each with and without the index")
    parser.add_argument("--lag-rate", type=int, default=500, help="events/s for the index's lag (0: skip)")
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--keep", type=Path, help="keep the SQLite inbox in this directory, and reuse it when there")
    parser.add_argument("--quick", action="store_true", help="100,000 events in 10,000 issues, 5 runs, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.events, args.issues, args.runs, args.rounds = 100_000, 10_000, 5, 1
    databases = args.databases.split(",")
    bodies = triage_feeder.envelopes(args.feeder_events) if args.feeder_events else []
    print(f"Issue search over {args.events:,} events in {args.issues:,} issues; the feeder over {len(bodies):,} envelopes.")
    with tempfile.TemporaryDirectory(prefix="lookout-triage-bench-") as tmp, contextlib.ExitStack() as stack:
        if "sqlite" in databases:
            if args.events:
                kept = args.keep / f"triage-{args.events}-{args.issues}.db" if args.keep else Path(tmp) / "triage.db"
                build_and_search("SQLite", f"sqlite:///{kept}", args, kept.with_suffix(".json") if args.keep else None)
            if bodies:
                report_feeder("SQLite", lambda name: f"sqlite:///{Path(tmp) / name}.db", bodies, args.rounds, args.lag_rate)
        if "postgresql" in databases:
            server = stack.enter_context(services.postgres())
            if args.events:
                build_and_search("PostgreSQL", _database(server, "triage"), args, server=server)
            if bodies:
                report_feeder("PostgreSQL", lambda name: _database(server, name), bodies, args.rounds, args.lag_rate)


def server_cpu(postmaster: int) -> float:
    """CPU seconds of a PostgreSQL server: its postmaster with the children it has reaped (parallel
    workers that ended), and each live child (backends, workers)."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rpartition(")")[2].split()  # fields from the 3rd: state, ppid, ...
            if stat.parent.name == str(postmaster):
                ticks += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
            elif fields[1] == str(postmaster):
                ticks += int(fields[11]) + int(fields[12])
    return ticks / CLK_TCK


def _database(server: services.Postgres, name: str) -> str:
    """A new, empty database on `server`."""
    admin = sqlalchemy.create_engine(server.url(), isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    admin.dispose()
    return server.url(name)


if __name__ == "__main__":
    main()
