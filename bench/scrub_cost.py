"""What filtering and scrubbing every envelope before its first write costs (issue 35), against the
code before that change (commit fed01e6, where rows were written as received and the feeder scrubbed
them), in one run.

A. The whole path: ~48 KB error events (`envelopes()` of bench/inbox_ingest.py) POSTed to Sentry's
   `/api/<id>/envelope/` of `app.standalone.inbox` (ingest endpoints, tunnel, outbox, feeder: as in
   the Reflex backend, local mode) under granian, 1 worker, on a SQLite file; events/s from the first
   post until the last of them is in the inbox (`inbox_event` rows, polled every 20 ms). Three
   variants, each a project of its own whose options are written as the settings page writes them
   (`ProjectOptionsStore.set_scrubbing`) before the server starts, so no round waits for a cache:
   scrubbing off (`scrub_data` false); on (the defaults; these events hold nothing to scrub); on with
   a password in each event's request data. The variants turn over the rounds (each first in one),
   and within a variant the two trees alternate.
B. The tunnel's accept rate: the same events, with a DSN in their header, POSTed to the tunnel path
   (/monitoring) of `app.standalone.tunnel` (tunnel and outbox; no feeder) in local mode (no
   SENTRY_DSN: the tunnel's `prepare` filters and scrubs, app/ingest/before_write.py, under project
   1's default options) and in Sentry mode (SENTRY_DSN at bench/upstream.py on loopback; nothing is
   prepared; the forwarder may deliver meanwhile, and the outbox is drained before the next
   measurement). Rate = events answered 200 / seconds of posting.
C. "before": A, and B's local mode, against the tree of fed01e6, checked out once as a git worktree
   at /tmp/lookout-before (reused when present) and served from there with this venv (PYTHONPATH and
   granian's working directory pointing at it). The schema is the same at both commits, so the bench
   makes both databases and writes the options with this tree's code.

Every server: LOOKOUT_SERVER_MONITORING off, intake limits off, outbox and inbox caps of 4 GiB (so
neither 503s nor retention enter the figures). 8 keep-alive httpx clients (bench/spotlight_accept.py
`post_all`, which raises on any answer but 2xx) in this process, sharing the two cores with the
servers: the figures include the client's work. Server CPU is the server's process group's user +
system time over the measurement, per event.

Checked after each measurement (RuntimeError otherwise): every event posted is in the inbox, once
(A), or in the outbox (B local) / delivered upstream (B Sentry); with a password, no stored event's
text (read back as the inbox reads it, `kept_events`) nor its outbox row holds it and the field is
still there, filtered; each row's envelope header is marked scrubbed before the write by the
current tree and not by the old one (so the old tree was really the one served).

    .venv/bin/python -m bench.scrub_cost [--events 2000] [--rounds 3] [--size 48000] [--skip-before]

Goals (issue 35): whole path, scrubbing on / off ≥ 0.8×; tunnel accept, local / Sentry mode ≥ 0.8×.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import sqlalchemy
from sqlalchemy import func, select

from app import db
from app.inbox.reading import kept_events
from app.inbox.tables import EVENTS
from app.ingest.store import InboxStore
from app.projects.options_store import ProjectOptionsStore
from bench.harness.lookout import NO_INTAKE_LIMITS, OUTBOX_CAP, outbox_rows
from bench.harness.processes import ROOT, Processes, workspace
from bench.harness.report import goal, versions
from bench.harness.servers import HOST, free_port, granian, http, wait_ready
from bench.inbox_ingest import envelopes
from bench.spotlight_accept import post_all
from reflex_lookout.dsn import Dsn
from reflex_lookout.protocol import encodings
from reflex_lookout.scrubbing.envelope import SCRUBBED
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from reflex_lookout.settings import DEFAULT_TUNNEL_PATH
from reflex_lookout.tables import OUTBOX

BEFORE_COMMIT = "fed01e6"
BEFORE_DIR = Path("/tmp/lookout-before")
LOCAL_DSN = "http://bench@localhost/1"  # project 1: the tunnel's in local mode (B), default options
CLIENTS = 8
WARM_UP = 200  # events per project or server before the first round, untimed
GOAL = 0.8
POLL_S = 0.02
SECRET = "hunter"  # envelopes(secret=True) puts f"hunter{n}" in each event's request data
PASSWORD = "on, a password in each event"
# label: (project id, its scrubbing options, a password in each event)
VARIANTS = {"off": (2, ScrubbingSettings(scrub_data=False), False), "on": (3, ScrubbingSettings(), False),
            PASSWORD: (4, ScrubbingSettings(), True)}


def project_dsn(project_id: int) -> str:
    return f"http://bench{project_id}@localhost/{project_id}"


@dataclass(frozen=True)
class Tree:
    """A checkout of Lookout served by granian: this one ("after") or fed01e6's ("before")."""

    name: str
    root: Path

    @property
    def env(self) -> dict[str, str]:
        if self.root == ROOT:
            return {}
        return {"PYTHONPATH": f"{self.root}:{self.root / 'plugin' / 'src'}"}

    @property
    def marks_scrubbed(self) -> bool:
        """Whether this tree writes envelopes filtered and scrubbed, their header saying so."""
        return self.root == ROOT


@dataclass
class Figures:
    """Per measurement: events/s, and CPU ms per event of the server and of this process (the clients)."""

    rates: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    client_ms: list[float] = field(default_factory=list)

    def add(self, rate: float, cpu_ms: float, client_ms: float) -> None:
        self.rates.append(rate)
        self.cpu_ms.append(cpu_ms)
        self.client_ms.append(client_ms)

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_ms)

    @property
    def client(self) -> float:
        return statistics.median(self.client_ms)

    def each(self) -> str:
        return ", ".join(f"{rate:.0f}" for rate in self.rates)


def before_tree() -> Tree:
    """fed01e6's tree as a worktree of this repository under /tmp (made once, reused)."""
    if not (BEFORE_DIR / "app" / "standalone" / "inbox.py").exists():
        print(f"  git worktree add {BEFORE_DIR} {BEFORE_COMMIT} (once) ...", flush=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", str(BEFORE_DIR), BEFORE_COMMIT], check=True,
                       stdout=subprocess.DEVNULL)
    head = subprocess.run(["git", "-C", str(BEFORE_DIR), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    wanted = subprocess.run(["git", "-C", str(ROOT), "rev-parse", BEFORE_COMMIT], capture_output=True, text=True,
                            check=True).stdout.strip()
    if head != wanted:
        raise RuntimeError(f"{BEFORE_DIR} is at {head[:12]}, not {BEFORE_COMMIT}: remove it (git worktree remove)")
    return Tree("before", BEFORE_DIR)


def prepared_database(path: Path, projects: dict[int, ScrubbingSettings]) -> sqlalchemy.Engine:
    """A migrated SQLite file holding `projects`, each with its scrubbing options as the settings page writes them."""
    engine = db.engine(f"sqlite:///{path}")
    db.migrate(engine)
    inbox, options = InboxStore(engine), ProjectOptionsStore(engine)
    for project_id, scrubbing in projects.items():
        inbox.ensure_project(Dsn.parse(LOCAL_DSN if project_id == 1 else project_dsn(project_id)))
        options.set_scrubbing(project_id, scrubbing, by="bench")
    return engine


def server_env(db_path: Path, sentry_dsn: str = "") -> dict[str, str]:
    return {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": sentry_dsn, "LOOKOUT_LOCAL_DSN": LOCAL_DSN,
            "LOOKOUT_SERVER_MONITORING": "off", "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP),
            "LOOKOUT_INBOX_MAX_BYTES": str(OUTBOX_CAP),
            **NO_INTAKE_LIMITS}


def start(processes: Processes, name: str, tree: Tree, target: str, env: dict[str, str], ready: str) -> int:
    """Serve `target` of `tree` under granian (1 worker); its port once it answers."""
    port = free_port()
    # Started in the tree (`env --chdir`; Processes starts in this one): granian imports from its working directory.
    processes.start(name, ["env", f"--chdir={tree.root}", *granian(target, port)], {**env, **tree.env})
    wait_ready(processes, name, port, ready)
    return port


def with_dsn(body: bytes, dsn: str) -> bytes:
    """`body` with `dsn` in its envelope header, as a browser SDK posting to the tunnel sends it."""
    header, rest = body.split(b"\n", 1)
    return json.dumps({**json.loads(header), "dsn": dsn}).encode() + b"\n" + rest


def posted(url: str, bodies: list[bytes]) -> float:
    """Seconds to POST every body (CLIENTS at a time; every answer must be 2xx)."""
    start = time.perf_counter()
    asyncio.run(post_all(url, bodies, CLIENTS))
    return time.perf_counter() - start


def header_of(body: bytes, content_encoding: str) -> dict[str, object]:
    return dict(json.loads(encodings.decode(body, content_encoding, len(body) * 64 + 2**20).split(b"\n", 1)[0]))


def check_marked(tree: Tree, header: dict[str, object], where: str) -> None:
    if (header.get(SCRUBBED) == 1) != tree.marks_scrubbed:
        raise RuntimeError(f"{tree.name}: an outbox row of {where} is {'' if tree.marks_scrubbed else 'not '}expected "
                           f"to be marked scrubbed before the write; its header is {header}: is the right tree served?")


class Inbox:
    """An `app.standalone.inbox` server of one tree, its database holding the variants' projects (A)."""

    def __init__(self, tree: Tree, workdir: Path, processes: Processes) -> None:
        self.tree, self.processes, self.name = tree, processes, f"inbox-{tree.name}"
        db_path = workdir / f"{self.name}.db"
        self.engine = prepared_database(db_path, {pid: scrubbing for pid, scrubbing, _ in VARIANTS.values()})
        self.port = start(processes, self.name, tree, "app.standalone.inbox:app", server_env(db_path), "/")

    def url(self, project_id: int) -> str:
        return f"http://{HOST}:{self.port}/api/{project_id}/envelope/?sentry_key=bench{project_id}"

    def last_id(self) -> int:
        with self.engine.connect() as connection:
            return int(connection.execute(select(func.coalesce(func.max(EVENTS.c.id), 0))).scalar_one())

    def stored(self, project_id: int, after: int) -> int:
        with self.engine.connect() as connection:
            return int(connection.execute(select(func.count()).select_from(EVENTS).where(
                EVENTS.c.project_id == project_id, EVENTS.c.id > after)).scalar_one())

    def measure(self, project_id: int, bodies: list[bytes]) -> tuple[float, float, float]:
        """(events/s from the first post until the last event is in the inbox, CPU ms per event of the
        server and of this process)."""
        after, cpu, client = self.last_id(), self.processes.cpu_seconds(self.name), time.process_time()
        start = time.perf_counter()
        posted(self.url(project_id), bodies)
        deadline = time.perf_counter() + max(120.0, len(bodies) / 20)
        while (count := self.stored(project_id, after)) < len(bodies):
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{self.name}: {count} of {len(bodies)} events in the inbox after "
                                   f"{time.perf_counter() - start:.0f} s:\n{self.processes.log_tail(self.name)}")
            time.sleep(POLL_S)
        seconds, client = time.perf_counter() - start, time.process_time() - client
        cpu = self.processes.cpu_seconds(self.name) - cpu
        self.check(project_id, bodies, after)
        return len(bodies) / seconds, 1000 * cpu / len(bodies), 1000 * client / len(bodies)

    def check(self, project_id: int, bodies: list[bytes], after: int) -> None:
        """Every event posted is in the inbox once; with a password in them, none is stored, and the
        rows were written (or rewritten) as this tree does."""
        sent = {json.loads(body.split(b"\n", 1)[0])["event_id"] for body in bodies}
        secret = SECRET.encode() in bodies[0]
        columns = (EVENTS.c.event_id, EVENTS.c.payload, EVENTS.c.envelope_id, EVENTS.c.item_index)
        with self.engine.connect() as connection:
            rows = connection.execute(select(*columns).where(EVENTS.c.project_id == project_id,
                                                             EVENTS.c.id > after)).all()
            ids = [row[0] for row in rows]
            if len(ids) != len(bodies) or set(ids) != sent:
                raise RuntimeError(f"{self.name}, project {project_id}: {len(ids)} events stored "
                                   f"({len(set(ids) & sent)} of the {len(sent)} posted)")
            outbox = select(OUTBOX.c.body, OUTBOX.c.content_encoding).where(
                OUTBOX.c.id.in_(sorted({row[2] for row in rows if row[2] is not None})))
            written = connection.execute(outbox).all()
            for body, encoding in written[:1]:  # an event changed by symbolication is kept in its own payload
                check_marked(self.tree, header_of(body, encoding), f"project {project_id}")
            if not secret:
                return
            events = kept_events(connection, [row[1:] for row in rows])
        leaks = [event for event in events if event is None or SECRET in json.dumps(event)]
        leaks += [body for body, encoding in written if SECRET.encode() in encodings.decode(body, encoding, 2**30)]
        if leaks:
            raise RuntimeError(f"{self.name}: {len(leaks)} stored events or rows are unreadable or hold a password")
        password = events[0]["request"]["data"].get("password") if events[0] else None
        if not isinstance(password, str) or not password or SECRET in password:
            raise RuntimeError(f"{self.name}: the password field is not kept filtered: {password!r}")


class Accepting:
    """An `app.standalone.tunnel` server of one tree, local or Sentry mode (B)."""

    def __init__(self, tree: Tree, workdir: Path, processes: Processes, upstream: int | None) -> None:
        self.tree, self.processes = tree, processes
        self.upstream = upstream
        self.name = f"tunnel-{'sentry' if upstream else 'local'}-{tree.name}"
        self.db_path = workdir / f"{self.name}.db"
        dsn = f"http://bench@{HOST}:{upstream}/1" if upstream else LOCAL_DSN
        self.dsn = dsn
        if upstream is None:  # the tunnel's project, default options, made as the backend would make it
            prepared_database(self.db_path, {1: ScrubbingSettings()}).dispose()
        self.port = start(processes, self.name, tree, "app.standalone.tunnel:app",
                          server_env(self.db_path, dsn if upstream else ""), f"{DEFAULT_TUNNEL_PATH}/stats")
        self.url = f"http://{HOST}:{self.port}{DEFAULT_TUNNEL_PATH}"

    def measure(self, bodies: list[bytes]) -> tuple[float, float, float]:
        """(events answered 200 per second of posting, CPU ms per event of the server and of this
        process); then checked, and in Sentry mode the outbox drained before anything else is measured."""
        bodies = [with_dsn(body, self.dsn) for body in bodies]
        rows = outbox_rows(self.db_path)
        if self.upstream:
            http("POST", self.upstream, "/reset")
        cpu, client = self.processes.cpu_seconds(self.name), time.process_time()
        seconds = posted(self.url, bodies)
        cpu, client = self.processes.cpu_seconds(self.name) - cpu, time.process_time() - client
        if self.upstream:
            self.drain(len(bodies))
        elif outbox_rows(self.db_path) != rows + len(bodies):
            raise RuntimeError(f"{self.name}: {outbox_rows(self.db_path) - rows} rows written for {len(bodies)} accepted")
        else:
            engine = db.engine(f"sqlite:///{self.db_path}")
            with engine.connect() as connection:
                last = connection.execute(select(OUTBOX.c.body, OUTBOX.c.content_encoding)
                                          .order_by(OUTBOX.c.id.desc()).limit(1)).one()
            check_marked(self.tree, header_of(*last), "the tunnel")
        return len(bodies) / seconds, 1000 * cpu / len(bodies), 1000 * client / len(bodies)

    def drain(self, count: int) -> None:
        assert self.upstream is not None
        deadline = time.perf_counter() + max(120.0, count / 20)
        while outbox_rows(self.db_path) or int(json.loads(http("GET", self.upstream, "/count")[1])["envelopes"]) < count:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{self.name}: the outbox did not drain:\n{self.processes.log_tail(self.name)}")
            time.sleep(0.05)
        got = int(json.loads(http("GET", self.upstream, "/count")[1])["envelopes"])
        if got != count:
            raise RuntimeError(f"{self.name}: upstream received {got} envelopes for {count} accepted")


def turned(items: list[str], by: int) -> list[str]:
    return items[by % len(items):] + items[:by % len(items)]


def progress(figures: Figures) -> str:
    return (f"{figures.rates[-1]:7.1f}/s, CPU ms per event: server {figures.cpu_ms[-1]:.2f}, "
            f"client {figures.client_ms[-1]:.2f}")


def run(args: argparse.Namespace, workdir: Path, processes: Processes) -> None:
    trees = [Tree("after", ROOT)] + ([] if args.skip_before else [before_tree()])
    compared = "--skip-before" if args.skip_before else f"before = {BEFORE_COMMIT} ({BEFORE_DIR})"
    print(f"{args.events} error events of ~{args.size // 1000} KB per measurement, {args.rounds} rounds, "
          f"{CLIENTS} keep-alive httpx clients; {compared}", flush=True)
    print(f"  {versions()}", flush=True)
    upstream = free_port()
    processes.start("upstream", granian("bench.upstream:app", upstream, "rsgi"))
    wait_ready(processes, "upstream", upstream, "/count")
    inboxes = {tree.name: Inbox(tree, workdir, processes) for tree in trees}
    tunnels = {f"local-{tree.name}": Accepting(tree, workdir, processes, None) for tree in trees}
    tunnels["sentry-after"] = Accepting(trees[0], workdir, processes, upstream)
    print("  servers up; warming up ...", flush=True)
    for inbox in inboxes.values():
        for project_id, _, secret in VARIANTS.values():
            inbox.measure(project_id, envelopes(WARM_UP, args.size, secret))
    for tunnel in tunnels.values():
        tunnel.measure(envelopes(WARM_UP, args.size))
    whole = {(label, tree): Figures() for label in VARIANTS for tree in inboxes}
    accept = {key: Figures() for key in tunnels}
    for round_ in range(args.rounds):
        for label in turned(list(VARIANTS), round_):
            project_id, _, secret = VARIANTS[label]
            bodies = envelopes(args.events, args.size, secret)
            for tree in turned(list(inboxes), round_):
                whole[label, tree].add(*inboxes[tree].measure(project_id, bodies))
                print(f"  round {round_ + 1}, A, {tree:<6} scrubbing {label:<30} {progress(whole[label, tree])}",
                      flush=True)
        bodies = envelopes(args.events, args.size)
        for key in turned(list(tunnels), round_):
            accept[key].add(*tunnels[key].measure(bodies))
            print(f"  round {round_ + 1}, B, tunnel {key:<14} {progress(accept[key])}", flush=True)
    report(args, whole, accept, [tree.name for tree in trees])


def report(args: argparse.Namespace, whole: dict[tuple[str, str], Figures], accept: dict[str, Figures],
           trees: list[str]) -> None:
    before = "before" in trees
    print(f"\nA. Whole path, POST /api/<id>/envelope/ → outbox → inbox (app.standalone.inbox, granian 1 worker, "
          f"SQLite):\n   events/s from the first post until the last event is in the inbox, median of {args.rounds} "
          f"rounds;\n   CPU ms per event (medians) of the server and of the clients (this process)\n")
    columns = f"{'events/s':>10}{'server':>8}{'client':>8}"
    print((f"{'':<32}{'after':<26}" + (f"before ({BEFORE_COMMIT})" if before else "")).rstrip())
    print(f"{'scrubbing':<32}{columns}" + (f"{columns}{'after/before':>14}" if before else ""))
    for label in VARIANTS:
        line = f"{label:<32}"
        for tree in trees:
            found = whole[label, tree]
            line += f"{found.rate:>10.1f}{found.cpu:>8.2f}{found.client:>8.2f}"
        if before:
            line += f"{whole[label, 'after'].rate / whole[label, 'before'].rate:>13.2f}×"
        print(line)
    for tree in trees:
        print(f"  each round, {tree}: " + "; ".join(f"{label} {whole[label, tree].each()}" for label in VARIANTS))
    print()
    for label in ("on", PASSWORD):
        rate = {tree: whole[label, tree].rate / whole["off", tree].rate for tree in trees}
        cpu = {tree: whole[label, tree].cpu / whole["off", tree].cpu for tree in trees}
        verdict = f"   ({goal(rate['after'], GOAL, True)})" if label == "on" else ""
        print(f"{label + ' / off':<38} after {rate['after']:.2f}×{verdict}"
              + (f"   before {rate['before']:.2f}×" if before else ""))
        print(f"{'':<38} server CPU per event: after {cpu['after']:.2f}×"
              + (f", before {cpu['before']:.2f}×" if before else ""))
    print(f"\nB. The tunnel's accept rate, POST {DEFAULT_TUNNEL_PATH} of app.standalone.tunnel (granian 1 worker, "
          f"no feeder):\n   events answered 200 per second of posting, median of {args.rounds} rounds; CPU ms per "
          f"event (medians)\n")
    rows = [("local-after", "local mode, after (filtered and scrubbed first)"),
            ("sentry-after", "Sentry mode, after (nothing prepared; forwarding)")]
    if before:
        rows.append(("local-before", f"local mode, before ({BEFORE_COMMIT}: as received)"))
    print(f"{'':<52}{'accepted/s':>10}{'server':>8}{'client':>8}")
    for key, label in rows:
        found = accept[key]
        print(f"{label:<52}{found.rate:>10.1f}{found.cpu:>8.2f}{found.client:>8.2f}   (each round: {found.each()})")
    ratio = accept["local-after"].rate / accept["sentry-after"].rate
    print(f"\nlocal / Sentry mode      {ratio:.2f}×   ({goal(ratio, GOAL, True)}); server CPU per event "
          f"{accept['local-after'].cpu / accept['sentry-after'].cpu:.2f}×")
    if before:
        print(f"local mode after / before {accept['local-after'].rate / accept['local-before'].rate:.2f}×; server CPU "
              f"per event {accept['local-after'].cpu / accept['local-before'].cpu:.2f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2000, help="events per measurement (default 2000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, each variant once a round (default 3)")
    parser.add_argument("--size", type=int, default=48_000, help="bytes per event, about (default 48000)")
    parser.add_argument("--skip-before", action="store_true", help=f"do not measure {BEFORE_COMMIT}'s tree")
    args = parser.parse_args()
    if args.events < 1 or args.rounds < 1 or args.size < 2000:
        parser.error("--events and --rounds must be ≥ 1, --size ≥ 2000")
    with workspace() as (workdir, processes):
        run(args, workdir, processes)


if __name__ == "__main__":
    main()
