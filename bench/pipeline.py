"""One benchmark of the whole path (issue 37, item 4): a realistic mix of envelopes posted over HTTP
through accept → outbox → inbox, every default on, on SQLite and on PostgreSQL, against Bugsink.

The mix (bench/harness/mix.py), ~48 KB an envelope on average (uncompressed), in a fixed rotation
of 20: 6 Python errors, 5 transactions (70–130 spans) and 2 batches of 100 log lines, all made by
the real sentry-sdk and posted as it posts them (brotli, `X-Sentry-Auth`); 4 browser errors with
a 30-frame minified stack over the real production build's chunks (bench/browser_stacks.py: the
app's build on disk, else one made with esbuild) and 3 browser sessions, posted as the browser SDK
posts them (uncompressed, the key in the query, a Chrome User-Agent). Every error has a `user.id`
of its own. They go to project 2 ("another app"), whose source maps are uploaded first with the
pinned sentry-cli through Lookout's upload API (`sourcemaps upload` of the build's bundle: stored
as the app stores uploads), so the browser frames are symbolicated.

Lookout: `app.standalone.inbox:app` (the ingest endpoints, tunnel, outbox, feeder and alert sender
in local mode) under granian, `POST /api/2/envelope/`, with every default on: inbound filters, PII
scrubbing before the write, User-Agent parsing, the tag index, symbolication, quotas (none set, the
default: each envelope is still checked), retention and caps. Two things are off, as in the other
benchmarks: the server's own SDK (LOOKOUT_SERVER_MONITORING=off) and the per-client and per-key
intake rates (one load generator on loopback stands for many clients). Two databases:
- SQLite, a file in a temp dir, granian 1 worker;
- PostgreSQL, a private cluster on loopback started as the tests start theirs (tests/services.py),
  granian `--workers 2`.
The load (bench/harness/mixload.py, asyncio, in a process of its own): a warm-up, untimed, then
1. the burst: `--events` envelopes, 8 keep-alive connections, as fast as they are answered.
   Throughput = envelopes fully ingested per second: from the first request to the moment the
   feeder has read every accepted envelope into the inbox (`inbox_read`, polled every 50 ms). While
   it runs py-spy samples the server's processes (25 Hz; what that costs them is printed): each
   stage's share of the samples (bench/harness/profile.py; `--profile-out DIR` keeps the stacks).
2. paced: for `--paced-seconds`, the same mix at `--paced-share` of SQLite's burst throughput
   (the same rate for both databases), 32 connections.
Latency, in both: from the 200 (as the client read it) until the event's issue is found by
`IssueSearch` (app/inbox/search/engine.py) with `user.id:<the event's own>`, split where the event's
row is first seen in the inbox (`inbox_event`; tags are counted after the ingest transaction, so
searchable may come later). Both are polled, oldest first, every 20 ms; each search's own time is
printed. In the burst 300 of the errors are followed (spread evenly); paced, all.

Bugsink 2.6.1 gets the burst's first `--bugsink-events` envelopes, exactly as bench/inbox_ingest.py
runs it (bench/harness/bugsink.py: Django's test client, in-process, no HTTP; it keeps the errors
and drops the other items; no source maps uploaded to it).

    .venv/bin/python -m bench.pipeline [--events 1500] [--paced-seconds 15] [--bugsink-events 400]
                                       [--databases sqlite,postgresql] [--quick] [--no-profile]
                                       [--profile-out DIR]

Goals (issue 37): Lookout on SQLite ≥ 30× Bugsink (envelopes fully ingested per second over the
same mix); PostgreSQL with 2 workers ≥ SQLite. Prints figures; asserts nothing. About 3 minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy
from sqlalchemy import func, select

from app import db
from app.inbox.reading import InboxReader
from app.inbox.search.engine import IssueSearch
from app.inbox.tables import COUNTS, EVENTS, LOGS, READ, TRANSACTIONS
from app.ingest.store import InboxStore
from app.sourcemaps.own_build import SENTRY_CLI
from app.sourcemaps.tables import BUILDS, FILES
from app.sourcemaps.tokens import Tokens
from bench.browser_stacks import Stacks, chunks_of, find_build, mapped
from bench.harness.bugsink import BugsinkRun, pinned_version, run_bugsink
from bench.harness.lookout import NO_INTAKE_LIMITS
from bench.harness.mix import KINDS, PROJECT_ID, PUBLIC_KEY, SHARES, Mix, Posted
from bench.harness.mixload import Answers, write_requests
from bench.harness.processes import CLK_TCK, Processes, workspace
from bench.harness.profile import ORDER, RATE_HZ, Profile
from bench.harness.report import goal, version, versions
from bench.harness.servers import free_port, granian, wait_ready
from bench.harness.stats import percentile
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import REJECTED
from reflex_lookout.tables import OUTBOX
from tests import services

GOAL = 30.0
LOCAL_DSN = "http://bench@localhost/1"
CONNECTIONS, PACED_CONNECTIONS = 8, 32
PROBES = 300  # errors followed to "searchable" in the burst, at most (spread evenly)
POLL_S, FED_POLL_S = 0.02, 0.05
MISSES = 4  # probes not found yet that one poll looks at, oldest first
SEARCH_WAIT_S = 30.0  # after the feeder is done: how long a probe may stay unfound before it is given up
CHUNKS, FRAMES_PER_CHUNK = 6, 5


@dataclass
class Phase:
    """One load on one database, and what it measured."""

    name: str
    posted: list[Posted]
    answers: Answers
    loader: dict[str, float]
    drained_at: float  # when the feeder had read every accepted envelope (time.time())
    found: dict[int, float]  # probe's index in `posted` → when it was searchable
    stored: dict[int, float]  # probe's index → when its event was in the inbox (the feeder's transaction committed)
    probes: list[int]
    server_cpu_s: float
    database_cpu_s: float | None = None
    stages: dict[str, int] | None = None
    profiler_cpu_s: float = 0.0
    searches_ms: list[float] = field(default_factory=list)  # each search of the poll (its own cost, a bound on its lag)
    load: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load average at the start and at the end

    @property
    def cpu_per_envelope_ms(self) -> float:
        """The server's CPU, and the database server's, per envelope accepted."""
        return 1000 * (self.server_cpu_s + (self.database_cpu_s or 0.0)) / self.accepted

    @property
    def accepted(self) -> int:
        return len(self.answers.accepted)

    @property
    def seconds(self) -> float:
        return self.drained_at - self.answers.first_sent

    @property
    def rate(self) -> float:
        return self.accepted / self.seconds

    @property
    def accept_rate(self) -> float:
        return self.accepted / (self.answers.last_answered - self.answers.first_sent)

    @property
    def latencies(self) -> list[float]:
        """Seconds from the 200 until searchable, per probe found."""
        return sorted(self.found[n] - self.answers.answered[n] for n in self.found)

    @property
    def to_stored(self) -> list[float]:
        """Seconds from the 200 until the event was stored, per probe found."""
        return sorted(self.stored[n] - self.answers.answered[n] for n in self.found if n in self.stored)

    @property
    def stored_to_found(self) -> list[float]:
        """Seconds from stored until searchable, per probe found."""
        return sorted(self.found[n] - self.stored[n] for n in self.found if n in self.stored)


@dataclass
class Outcome:
    """One database's run."""

    label: str
    upload_s: float
    uploaded_files: int
    phases: dict[str, Phase] = field(default_factory=dict)  # "burst", "paced"; the warm-up's accepted in `posted`
    stored: dict[str, int] = field(default_factory=dict)
    posted: dict[str, int] = field(default_factory=dict)
    mapped: tuple[int, int] = (0, 0)  # a stored browser error's frames: mapped by symbolication, in all


# --- the inbox under test -------------------------------------------------------------------------


def prepared(url: str) -> str:
    """Migrate the database, make project 2 with the mix's key, and a source-map upload token for
    it (as `python -m app.sourcemaps.tokens` makes one); the token's secret."""
    engine = db.engine(url)
    try:
        db.migrate(engine)
        store = InboxStore(engine)
        store.ensure_project(Dsn.parse(LOCAL_DSN))
        store.ensure_project(Dsn.parse(f"http://{PUBLIC_KEY}@localhost/{PROJECT_ID}"), name="Shop")
        return Tokens(engine).add(PROJECT_ID, "bench upload")[1]
    finally:
        engine.dispose()


class Inbox:
    """`app.standalone.inbox` under granian on one database, its maps uploaded."""

    def __init__(self, label: str, url: str, workers: int, processes: Processes, workdir: Path,
                 bundle: Path, postgres: services.Postgres | None) -> None:
        self.label, self.url, self.processes, self.workdir, self.postgres = label, url, processes, workdir, postgres
        self.name = f"lookout-{'postgresql' if postgres else 'sqlite'}"
        token = prepared(url)
        web = workdir / f"web-{self.name}"  # no build of its own to import: the maps come by upload
        web.mkdir()
        self.port = free_port()
        env = {"DATABASE_URL": url, "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN, "LOOKOUT_SERVER_MONITORING": "off",
               "REFLEX_WEB_WORKDIR": str(web), **NO_INTAKE_LIMITS}
        processes.start(self.name, granian("app.standalone.inbox:app", self.port, workers=workers), env)
        wait_ready(processes, self.name, self.port, "/")
        self.engine = db.engine(url)
        self.search = IssueSearch(self.engine)
        start = time.perf_counter()
        self.upload(bundle, token)
        self.upload_s = time.perf_counter() - start
        with self.engine.connect() as connection:
            self.uploaded = int(connection.execute(select(func.count()).select_from(FILES).join(BUILDS).where(
                BUILDS.c.project_id == PROJECT_ID)).scalar_one())
        if not self.uploaded:
            raise RuntimeError(f"{self.label}: sentry-cli uploaded no source map")

    def upload(self, bundle: Path, token: str) -> None:
        """`sentry-cli sourcemaps upload` of the bundle to project 2, as another app's build uploads it."""
        home = self.workdir / "sentry-cli-home"
        home.mkdir(exist_ok=True)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "SENTRY_AUTH_TOKEN": token, "SENTRY_LOAD_DOTENV": "0",
               "SENTRY_DISABLE_UPDATE_CHECK": "true"}
        done = subprocess.run([str(SENTRY_CLI), "--url", f"http://127.0.0.1:{self.port}", "sourcemaps", "upload",
                               "--org", "bench", "--project", str(PROJECT_ID), str(bundle)],
                              env=env, cwd=home, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"sentry-cli failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")

    def fed(self) -> int:
        """Outbox rows read into the inbox or rejected."""
        with self.engine.connect() as connection:
            read = connection.execute(select(func.count()).select_from(READ)).scalar_one()
            rejected = connection.execute(select(func.count()).select_from(OUTBOX).where(
                OUTBOX.c.status == REJECTED)).scalar_one()
        return int(read) + int(rejected)

    def rejected(self) -> list[str]:
        with self.engine.connect() as connection:
            return [str(reason) for reason in connection.execute(
                select(OUTBOX.c.last_error).where(OUTBOX.c.status == REJECTED).limit(3)).scalars()]

    def has_event(self, event_id: str) -> bool:
        with self.engine.connect() as connection:
            return connection.execute(select(EVENTS.c.id).where(
                EVENTS.c.project_id == PROJECT_ID, EVENTS.c.event_id == event_id)).first() is not None

    def searchable(self, probe: str) -> bool:
        return bool(self.search.ids(f"user.id:{probe}", project=PROJECT_ID, limit=1))

    def stored(self) -> dict[str, int]:
        """What project 2's inbox holds, per kind."""
        with self.engine.connect() as connection:
            def count(table: sqlalchemy.Table) -> int:
                return int(connection.execute(select(func.count()).select_from(table).where(
                    table.c.project_id == PROJECT_ID)).scalar_one())

            sessions = connection.execute(select(func.coalesce(func.sum(COUNTS.c.count), 0)).where(
                COUNTS.c.project_id == PROJECT_ID, COUNTS.c.kind == "session")).scalar_one()
            return {"errors": count(EVENTS), "transactions": count(TRANSACTIONS), "log lines": count(LOGS),
                    "sessions": int(sessions)}

    def database_cpu(self) -> float | None:
        """CPU seconds of the PostgreSQL server's processes alive now (None on SQLite)."""
        if self.postgres is None or self.postgres.process is None:
            return None
        pids = [self.postgres.process.pid, *services.children(self.postgres.process.pid)]
        return sum(_cpu_of(pid) for pid in pids)

    def close(self) -> None:
        self.processes.stop(self.name)
        self.engine.dispose()


def _cpu_of(pid: int) -> float:
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    return 0.0


# --- one load -------------------------------------------------------------------------------------


def measure(inbox: Inbox, name: str, posted: list[Posted], connections: int, rate: float, probes: list[int],
            profile: bool, keep_profile: Path | None = None) -> Phase:
    """Post `posted` (at `rate` a second, 0: as fast as answered), follow `probes` (indexes of errors
    in `posted`) until searchable, wait until the feeder has read everything accepted. `profile`:
    py-spy over the server meanwhile (its stacks copied to `keep_profile`)."""
    requests = inbox.workdir / f"{inbox.name}-{name}.http"
    write_requests(requests, (p.request() for p in posted))
    out = inbox.workdir / f"{inbox.name}-{name}.json"
    load_before = os.getloadavg()[0]
    fed_before = inbox.fed()
    cpu_before, database_before = inbox.processes.cpu_seconds(inbox.name), inbox.database_cpu()
    profiler = Profile(inbox.processes, inbox.workdir, inbox.name) if profile else None
    if profiler is not None:
        profiler.start()
        time.sleep(0.5)  # py-spy attached to every process
    loader_name = f"load-{inbox.name}-{name}"
    loader = inbox.processes.start(loader_name, [sys.executable, "-m", "bench.harness.mixload",
                                                 "--port", str(inbox.port), "--requests", str(requests),
                                                 "--connections", str(connections), "--rate", str(rate),
                                                 "--out", str(out)])
    unstored, pending = list(probes), []  # in posting order: not in the inbox yet; in it, not searchable yet
    found: dict[int, float] = {}
    stored: dict[int, float] = {}
    searches: list[float] = []
    expected = len(posted)
    drained_at: float | None = None
    answers: Answers | None = None
    stages, cpu, database_after, profiler_cpu, load_after = None, 0.0, None, 0.0, 0.0
    next_fed, last_found = 0.0, time.time()
    deadline = time.time() + max(300.0, 4 * len(posted) / max(rate, 10))
    while True:
        now = time.time()
        if answers is None and loader.poll() is not None:
            if loader.returncode != 0 or not out.exists():
                raise RuntimeError(f"the load generator failed:\n{inbox.processes.log_tail(loader_name)}")
            answers = Answers.read(out)
            expected = len(answers.accepted)
            accepted = set(answers.accepted)
            unstored = [n for n in unstored if n in accepted]
        if drained_at is None and now >= next_fed:
            next_fed = now + FED_POLL_S
            if answers is not None and inbox.fed() - fed_before >= expected:
                drained_at = time.time()
                if profiler is not None:
                    profiler_cpu = profiler.cpu_seconds()
                    stages = profiler.stop(keep_profile)
                cpu = inbox.processes.cpu_seconds(inbox.name) - cpu_before
                database_after = inbox.database_cpu()
                load_after = os.getloadavg()[0]
        misses = 0
        for n in list(unstored):
            if misses >= MISSES:
                break
            event_id = posted[n].event_id
            assert event_id is not None
            if inbox.has_event(event_id):
                stored[n] = time.time()
                unstored.remove(n)
                pending.append(n)
            else:
                misses += 1
        misses = 0
        for n in list(pending):
            if misses >= MISSES:
                break
            probe = posted[n].probe
            assert probe is not None
            asked = time.perf_counter()
            searchable = inbox.searchable(probe)
            searches.append((time.perf_counter() - asked) * 1000)
            if searchable:
                found[n], last_found = time.time(), time.time()
                pending.remove(n)
            else:
                misses += 1
        if drained_at is not None and (not (pending or unstored)
                                       or time.time() - max(last_found, drained_at) > SEARCH_WAIT_S):
            break
        if time.time() > deadline:
            raise RuntimeError(f"{inbox.label}, {name}: {inbox.fed() - fed_before} of {expected} envelopes fed "
                               f"after {time.time() - (answers.first_sent if answers else now):.0f} s:\n"
                               f"{inbox.processes.log_tail(inbox.name)}")
        time.sleep(POLL_S)
    assert answers is not None
    loader_result = json.loads(next(line for line in reversed(inbox.processes.log_tail(loader_name, 5).splitlines())
                                    if line.startswith("RESULT_JSON ")).removeprefix("RESULT_JSON "))
    inbox.processes.stop(loader_name)
    database_cpu = (None if database_before is None or database_after is None
                    else database_after - database_before)
    return Phase(name, posted, answers, loader_result, drained_at, found, stored,
                 [n for n in probes if n in set(answers.accepted)],
                 cpu, database_cpu, stages, profiler_cpu, searches, (load_before, load_after))


def probes_of(posted: list[Posted], most: int | None) -> list[int]:
    """The errors of `posted` to follow: all, or `most` spread evenly."""
    errors = [n for n, p in enumerate(posted) if p.probe is not None]
    if most is None or len(errors) <= most:
        return errors
    return [errors[round(k * len(errors) / most)] for k in range(most)]


def run_inbox(inbox: Inbox, warm: list[Posted], burst: list[Posted],
              paced: Callable[[float], tuple[list[Posted], float]], args: argparse.Namespace) -> Outcome:
    """Warm-up, burst and paced load on one inbox. `paced(burst rate)`: the paced load's envelopes and rate."""
    outcome = Outcome(inbox.label, inbox.upload_s, inbox.uploaded)
    print(f"  {inbox.label}: maps uploaded ({inbox.uploaded} files, {inbox.upload_s:.1f} s); warming up with "
          f"{len(warm)} envelopes ...", flush=True)
    warmed = measure(inbox, "warm-up", warm, CONNECTIONS, 0.0, [], False)
    print(f"  {inbox.label}: the burst, {len(burst)} envelopes ...", flush=True)
    keep = args.profile_out / f"{inbox.name}-burst.txt" if args.profile_out else None
    outcome.phases["burst"] = phase = measure(inbox, "burst", burst, CONNECTIONS, 0.0, probes_of(burst, PROBES),
                                              not args.no_profile, keep)
    print(f"    {phase.rate:.1f} envelopes/s fully ingested ({phase.accept_rate:.1f}/s accepted)", flush=True)
    bodies, rate = paced(phase.rate)
    if bodies:
        print(f"  {inbox.label}: paced, {len(bodies)} envelopes at {rate:.1f}/s ...", flush=True)
        outcome.phases["paced"] = phase = measure(inbox, "paced", bodies, PACED_CONNECTIONS, rate,
                                                  probes_of(bodies, None), False)
        print(f"    searchable p95 {p95(phase)}", flush=True)
    outcome.stored = inbox.stored()
    outcome.mapped = mapped_frames(inbox, burst)
    accepted = [done.posted[n] for done in (warmed, *outcome.phases.values()) for n in done.answers.accepted]
    outcome.posted = items_of(accepted)
    rejected = inbox.rejected()
    if rejected:
        print(f"  !! {inbox.label}: outbox rows rejected, e.g. {rejected}", flush=True)
    return outcome


def mapped_frames(inbox: Inbox, posted: list[Posted]) -> tuple[int, int]:
    """(frames mapped, frames) of the first browser error of `posted` as the inbox keeps it."""
    first = next(p for p in posted if p.kind == "browser error")
    stored = InboxReader(inbox.engine).event(json.loads(first.body.split(b"\n", 1)[0])["event_id"])
    if stored is None:
        return 0, 0
    frames = stored["event"]["exception"]["values"][0]["stacktrace"]["frames"]
    return mapped(stored["event"]), len(frames)


def items_of(posted: list[Posted]) -> dict[str, int]:
    """Items per kind the inbox keeps, over `posted` (the names of `Inbox.stored`)."""
    return {"errors": sum(p.items.get("event", 0) for p in posted),
            "transactions": sum(p.items.get("transaction", 0) for p in posted),
            "log lines": sum(p.items.get("log", 0) for p in posted),
            "sessions": sum(p.items.get("session", 0) for p in posted)}


# --- the report -----------------------------------------------------------------------------------


def describe_mix(posted: list[Posted]) -> list[str]:
    lines = [f"{'kind':<16}{'envelopes':>10}{'KB avg':>9}{'KB sent':>9}   items"]
    for kind in KINDS:
        mine = [p for p in posted if p.kind == kind]
        if not mine:
            continue
        items: dict[str, int] = {}
        for p in mine:
            for item, count in p.items.items():
                items[item] = items.get(item, 0) + count
        spans = sum(p.spans for p in mine)
        shown = ", ".join(f"{count} {item}" for item, count in items.items()) + (f" ({spans} spans)" if spans else "")
        lines.append(f"{kind:<16}{len(mine):>10}{statistics.mean(p.size for p in mine) / 1000:>9.1f}"
                     f"{statistics.mean(len(p.body) for p in mine) / 1000:>9.1f}   {shown}")
    lines.append(f"{'all':<16}{len(posted):>10}{statistics.mean(p.size for p in posted) / 1000:>9.1f}"
                 f"{statistics.mean(len(p.body) for p in posted) / 1000:>9.1f}   (KB sent: as posted, the Python SDK's "
                 "brotli-compressed)")
    return lines


def latency_line(phase: Phase) -> str:
    values = phase.latencies
    missing = len(phase.probes) - len(values)
    if not values:
        return f"none of {len(phase.probes)} errors followed was found within {SEARCH_WAIT_S:g} s"
    return (f"{spread(values)} over {len(values)} errors"
            + (f"; {missing} not found within {SEARCH_WAIT_S:g} s" if missing else "")
            + f"\n      of which accept → stored {spread(phase.to_stored)}; stored → searchable {spread(phase.stored_to_found)}"
            + f"\n      (each search of the poll: median {statistics.median(phase.searches_ms):.1f} ms, "
              f"p95 {percentile(phase.searches_ms, 0.95):.1f} ms, {len(phase.searches_ms)} searches)")


def spread(seconds: list[float]) -> str:
    if not seconds:
        return "-"
    return (f"p50 {percentile(seconds, 0.5) * 1000:.0f} ms, p95 {percentile(seconds, 0.95) * 1000:.0f} ms, "
            f"max {max(seconds) * 1000:.0f} ms")


def report(outcomes: list[Outcome], bugsink: BugsinkRun, bugsink_load: tuple[float, float]) -> None:
    bugsink_cpu = 1000 * bugsink.cpu_seconds / bugsink.envelopes
    print(f"\nBugsink {pinned_version()} (in-process, Django's test client, no HTTP): "
          f"{bugsink.envelopes} envelopes of the burst in {bugsink.seconds:.1f} s = {bugsink.per_second:.1f}/s, "
          f"CPU {bugsink_cpu:.2f} ms per envelope;\n  it stored {bugsink.stored} events (the errors); "
          f"load average {bugsink_load[0]:.1f} → {bugsink_load[1]:.1f}")
    for outcome in outcomes:
        burst = outcome.phases["burst"]
        print(f"\n{outcome.label}")
        print(f"  burst: {burst.accepted} of {len(burst.posted)} envelopes accepted in "
              f"{burst.answers.last_answered - burst.answers.first_sent:.1f} s ({burst.accept_rate:.1f}/s; "
              f"loader p50 {burst.loader['p50_us'] / 1000:.1f} ms, p99 {burst.loader['p99_us'] / 1000:.1f} ms, "
              f"non-2xx {int(burst.loader['status_errors'])}), fully ingested in {burst.seconds:.1f} s "
              f"(load average {burst.load[0]:.1f} → {burst.load[1]:.1f}):")
        ratio = burst.rate / bugsink.per_second
        print(f"    {burst.rate:8.1f} envelopes/s fully ingested   = {ratio:.1f}× Bugsink"
              + (f"   ({goal(ratio, GOAL, True)})" if outcome is outcomes[0] and outcome.label.startswith("SQLite") else ""))
        errors = sum(1 for n in burst.answers.accepted if burst.posted[n].probe)
        print(f"    {errors / burst.seconds:8.1f} error events/s among them   "
              f"(Bugsink: {bugsink.stored / bugsink.seconds:.1f} errors/s of its {bugsink.per_second:.1f} envelopes/s)")
        cpu_line = f"    CPU per envelope: server {1000 * burst.server_cpu_s / burst.accepted:.2f} ms"
        if burst.database_cpu_s is not None:
            cpu_line += f", PostgreSQL {1000 * burst.database_cpu_s / burst.accepted:.2f} ms"
        cpu_line += f", load generator {1000 * burst.loader['cpu_s'] / len(burst.posted):.2f} ms"
        print(cpu_line)
        print(f"      by CPU (Bugsink's ms per envelope / Lookout's, server and database): "
              f"{bugsink_cpu / burst.cpu_per_envelope_ms:.2f}×, a figure a busy machine does not stretch as much")
        print(f"    accept → searchable (user.id), a sample: {latency_line(burst)}")
        if burst.stages:
            total = sum(burst.stages.values())
            per_envelope = 1000 * burst.server_cpu_s / burst.accepted
            print(f"    server by stage (py-spy over its processes: {total} samples of threads running or ready to run, "
                  f"at {RATE_HZ} Hz;\n      py-spy itself used {100 * burst.profiler_cpu_s / burst.seconds:.0f} % of a core); "
                  f"ms: the share × the server's CPU per envelope")
            for stage in ORDER:
                if burst.stages.get(stage):
                    share = burst.stages[stage] / total
                    print(f"      {stage:<50}{100 * share:5.1f} %{share * per_envelope:7.2f} ms")
        paced = outcome.phases.get("paced")
        if paced is not None:
            offered = len(paced.posted) / (paced.answers.last_answered - paced.answers.first_sent)
            print(f"  paced: {paced.accepted} envelopes at {offered:.1f}/s; accept → searchable: {latency_line(paced)}")
        print("  stored / accepted: " + ", ".join(f"{kind} {outcome.stored.get(kind, 0)}/{count}"
                                                  for kind, count in outcome.posted.items()))
        print(f"  source maps uploaded with sentry-cli: {outcome.uploaded_files} files in {outcome.upload_s:.1f} s; "
              f"a stored browser error has {outcome.mapped[0]} of its {outcome.mapped[1]} frames mapped")
    rates = {outcome.label.split(",")[0]: outcome.phases["burst"].rate for outcome in outcomes}
    print("\nSummary")
    if "SQLite" in rates:
        ratio = rates["SQLite"] / bugsink.per_second
        print(f"  SQLite / Bugsink        {ratio:6.1f}×   ({goal(ratio, GOAL, True)})")
        sqlite = next(o for o in outcomes if o.label.startswith("SQLite")).phases["burst"]
        print(f"  (by CPU per envelope    {bugsink_cpu / sqlite.cpu_per_envelope_ms:6.1f}×: Bugsink "
              f"{bugsink_cpu:.1f} ms, Lookout's server {sqlite.cpu_per_envelope_ms:.1f} ms)")
    if "SQLite" in rates and "PostgreSQL" in rates:
        ratio = rates["PostgreSQL"] / rates["SQLite"]
        print(f"  PostgreSQL / SQLite     {ratio:6.2f}×   ({goal(ratio, 1.0, True)})")
    for outcome in outcomes:
        shown = ", ".join(f"{name} {p95(phase)}" for name, phase in outcome.phases.items())
        print(f"  {outcome.label.split(',')[0]:<24}p95 accept → searchable: {shown}")


def p95(phase: Phase) -> str:
    return f"{percentile(phase.latencies, 0.95) * 1000:.0f} ms" if phase.latencies else "none found"


# --- main -----------------------------------------------------------------------------------------


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, help="envelopes of the burst (default 1500; --quick 600)")
    parser.add_argument("--warmup", type=int, help="envelopes before, untimed (default 200; --quick 60)")
    parser.add_argument("--paced-seconds", type=float, help="the paced load's length (default 15; --quick 5; 0: none)")
    parser.add_argument("--paced-share", type=float, default=0.5,
                        help="the paced rate, a share of SQLite's burst throughput (default 0.5)")
    parser.add_argument("--bugsink-events", type=int, help="envelopes of the burst Bugsink gets (default 400; --quick 100)")
    parser.add_argument("--databases", default="sqlite,postgresql", help="of sqlite, postgresql (default both)")
    parser.add_argument("--quick", action="store_true", help="a short run, to try the bench (1–2 minutes)")
    parser.add_argument("--no-profile", action="store_true", help="no py-spy during the burst")
    parser.add_argument("--profile-out", type=Path, help="keep py-spy's collapsed stacks of each burst in this directory")
    parser.add_argument("--seed", type=int, default=37, help="picks the positions and the mix's values (default 37)")
    args = parser.parse_args()
    defaults = {"events": (1500, 600), "warmup": (200, 60), "paced_seconds": (15.0, 5.0), "bugsink_events": (400, 100)}
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    args.databases = [d.strip() for d in args.databases.split(",") if d.strip()]
    if not set(args.databases) <= {"sqlite", "postgresql"} or not args.databases:
        parser.error("--databases: sqlite, postgresql or both")
    if args.events < 20 or args.warmup < 0 or args.bugsink_events < 1:
        parser.error("--events ≥ 20, --warmup ≥ 0, --bugsink-events ≥ 1")
    if not args.no_profile and not Profile.available():
        print("py-spy is not installed (.venv/bin/pip install -r bench/requirements.txt): no stage shares")
        args.no_profile = True
    return args


def main() -> None:
    args = parse_args()
    started = time.monotonic()
    with workspace() as (workdir, processes):
        bundle, manifest, which = find_build(None, False, workdir)
        rng = random.Random(args.seed)
        stacks = Stacks(chunks_of(bundle, manifest, CHUNKS, (args.events + args.warmup) * FRAMES_PER_CHUNK + 5000, rng),
                        FRAMES_PER_CHUNK)
        mix = Mix(stacks, args.seed)
        print(f"Whole path: {args.events} envelopes in a burst, then {args.paced_seconds:g} s paced at "
              f"{args.paced_share:g}× {'SQLite' if args.databases[0] == 'sqlite' else 'PostgreSQL'}'s rate; "
              f"{', '.join(args.databases)}; "
              f"Bugsink {args.bugsink_events} envelopes."
              f"\n  mix per 20 envelopes: " + ", ".join(f"{share} {kind}" for kind, share in SHARES.items())
              + f"\n  load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores shared)"
              + f"\n  browser stacks: {which} ({len(manifest.files)} chunks; the {CHUNKS} largest in every stack)"
              f"\n  {versions()}, sentry-sdk {version('sentry-sdk')}",
              flush=True)
        print(f"  making {args.warmup + args.events} envelopes with the SDKs ...", flush=True)
        warm, burst = mix.make(args.warmup), mix.make(args.events)
        for line in describe_mix(burst):
            print("    " + line)
        print(f"  Bugsink: {args.bugsink_events} envelopes ...", flush=True)
        bugsink_dir = workdir / "bugsink-run"
        bugsink_dir.mkdir()
        load_before = os.getloadavg()[0]
        bugsink = run_bugsink([(p.body, p.encoding) for p in burst[: args.bugsink_events]], bugsink_dir)
        bugsink_load = (load_before, os.getloadavg()[0])
        print(f"    {bugsink.per_second:.1f} envelopes/s, {bugsink.stored} events stored", flush=True)
        made: list[tuple[list[Posted], float]] = []

        def paced(burst_rate: float) -> tuple[list[Posted], float]:
            """The paced load, made once, at its share of the first database's burst rate (SQLite's)."""
            if not made:
                rate = args.paced_share * burst_rate
                count = round(rate * args.paced_seconds) if args.paced_seconds > 0 else 0
                if count:
                    print(f"  making {count} envelopes for the paced load ...", flush=True)
                made.append((mix.make(count) if count else [], rate))
            return made[0]

        outcomes: list[Outcome] = []
        for database in args.databases:
            if database == "sqlite":
                url = f"sqlite:///{workdir / 'lookout.db'}"
                inbox = Inbox("SQLite, granian 1 worker", url, 1, processes, workdir, bundle, None)
                try:
                    outcomes.append(run_inbox(inbox, warm, burst, paced, args))
                finally:
                    inbox.close()
            else:
                with services.postgres() as server:
                    admin = sqlalchemy.create_engine(server.url(), isolation_level="AUTOCOMMIT",
                                                     poolclass=sqlalchemy.pool.NullPool)
                    with admin.connect() as connection:
                        connection.exec_driver_sql("CREATE DATABASE pipeline")
                    admin.dispose()
                    inbox = Inbox("PostgreSQL, granian 2 workers", server.url("pipeline"), 2, processes, workdir,
                                  bundle, server)
                    try:
                        outcomes.append(run_inbox(inbox, warm, burst, paced, args))
                    finally:
                        inbox.close()
    report(outcomes, bugsink, bugsink_load)
    print(f"\n({time.monotonic() - started:.0f} s in all; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
