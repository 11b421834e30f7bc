"""Two workers feeding one PostgreSQL (issue 37), in local mode: `app.standalone.inbox` under granian
with two workers, each of which reads the outbox into the inbox (app/ingest/feeder.py), posted to
while a worker is SIGKILLed in the middle of a batch and PostgreSQL restarts. Afterwards every
acknowledged envelope is stored exactly once: its event once, each issue's count equal to its stored
events, every outbox row read once and none rejected."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from plugin_support.envelopes import error_event
from plugin_support.helpers import until
from reflex_lookout.protocol import envelope
from tests.pg_databases import Databases
from tests.reliability.cluster import Outcome, Tunnels, post_all
from tests.services import Postgres

pytestmark = pytest.mark.anyio
DSN = "http://lookout@localhost/1"  # the inbox's local DSN
BODIES = 800  # at most: posting stops once AFTER_RESTART were acknowledged after the restart
AFTER_RESTART = 100
UNREAD = "select count(*) from outbox where status = 'local' and not exists (select from inbox_read where outbox_id = id)"
# Claim transactions: a feeder between claiming its rows (FOR UPDATE: a RowShareLock on the table) and committing.
CLAIMING = ("select l.pid, a.client_port from pg_locks l join pg_stat_activity a on a.pid = l.pid"
            " where l.relation = 'outbox'::regclass and l.mode = 'RowShareLock' and l.granted")


@pytest.fixture
def postgres_database(postgres_server: Postgres, postgres_databases: Databases) -> Iterator[str]:
    """A migrated, empty database (a copy of the session's template, tests/pg_databases.py): the
    workers start without migrating it, seconds sooner."""
    name = postgres_databases.take()
    yield postgres_server.url(name)
    if postgres_server.process is None:
        postgres_server.start()
    postgres_databases.give_back(name)


def bodies(count: int) -> list[bytes]:
    """Error events, every other one of three hot issues, the others an issue each (letters only:
    grouping takes digits for variable parts)."""
    def word(n: int) -> str:
        return "".join("abcdefghijklmnopqrstuvwxyz"[int(d)] for d in str(n))
    return [error_event(DSN, message=f"hot {('alpha', 'beta', 'gamma')[n % 3]}" if n % 2 else f"cold {word(n)}")
            for n in range(count)]


class Database:
    """The pipeline's database, read with connections of the test's own; `watch()` samples, in a
    thread, how many feeders are inside a claim transaction at once."""

    def __init__(self, url: str) -> None:
        self.engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.pool.NullPool)
        self.most_claiming = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def value(self, sql: str, default: int = -1) -> int:
        """One number (`default` while the database is away)."""
        try:
            with self.engine.connect() as connection:
                return int(connection.exec_driver_sql(sql).scalar_one())
        except sqlalchemy.exc.SQLAlchemyError:
            return default

    def read(self) -> int:
        return self.value("select count(*) from inbox_read")

    def claiming(self) -> list[tuple[int, int]]:
        """(backend pid, client port) of each connection inside a claim transaction."""
        try:
            with self.engine.connect() as connection:
                return sorted({(pid, port) for pid, port in connection.exec_driver_sql(CLAIMING)})
        except sqlalchemy.exc.SQLAlchemyError:
            return []

    def _watch(self) -> None:
        while not self._stop.wait(0.02):
            self.most_claiming = max(self.most_claiming, len(self.claiming()))

    @contextlib.contextmanager
    def watch(self) -> Iterator[None]:
        self._thread.start()
        try:
            yield
        finally:
            self._stop.set()
            self._thread.join(10)
            self.engine.dispose()


def ports_of(pid: int) -> set[int]:
    """The local TCP ports of process `pid`'s sockets (its database connections among them)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            found = re.fullmatch(r"socket:\[(\d+)\]", os.readlink(fd))
            if found:
                inodes.add(found.group(1))
    ports = set()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
                fields = line.split()
                if fields[9] in inodes:
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def feeding_worker(tunnels: Tunnels, database: Database) -> int | None:
    """A worker inside a claim transaction (its rows claimed, not committed), if one is now."""
    ports = {port for _, port in database.claiming()}
    return next((pid for pid in tunnels.worker_pids() if ports & ports_of(pid)), None)


async def test_two_workers_feed_through_a_sigkill_and_a_postgresql_restart_and_store_each_envelope_once(
    tunnels: Tunnels, postgres_server: Postgres, figures: dict[str, object]
) -> None:
    tunnels.env.update({"SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": DSN})
    tunnels.module = "app.standalone.inbox:app"
    tunnels.start()
    database = Database(tunnels.env["DATABASE_URL"])
    outcome, back, started = Outcome(), [], time.monotonic()
    with database.watch():
        loading = asyncio.create_task(post_all(
            tunnels.url, bodies(BODIES), clients=16, retry_503=True, outcome=outcome,
            until=lambda: bool(back) and len(outcome.acknowledged) >= back[0] + AFTER_RESTART))
        await until(lambda: database.read() >= 100, timeout=60)
        async with asyncio.timeout(30):  # a worker in the middle of a batch
            while (victim := await asyncio.to_thread(feeding_worker, tunnels, database)) is None:
                await asyncio.sleep(0.01)
        read_at_kill = database.read()
        tunnels.kill_worker(victim)
        killed_at = time.monotonic() - started
        await until(lambda: database.read() >= read_at_kill + 50, timeout=60)  # fed on since
        async with asyncio.timeout(30):  # a feeder in the middle of a batch
            while not (in_a_batch := await asyncio.to_thread(database.claiming)):
                await asyncio.sleep(0.01)
        restarted_at = time.monotonic() - started
        await asyncio.to_thread(postgres_server.restart, 0.5)
        back.append(len(outcome.acknowledged))
        await loading
        posted_at = time.monotonic() - started
        rows = database.value("select count(*) from outbox")
        await until(lambda: database.value(UNREAD) == 0, timeout=90)
        most_claiming, done_at = database.most_claiming, time.monotonic() - started
    check = Database(tunnels.env["DATABASE_URL"])
    with check.engine.connect() as connection:
        stored = dict(connection.exec_driver_sql("select event_id, count(*) from inbox_event group by event_id").all())
    read, rejected = check.read(), check.value("select count(*) from outbox where status = 'rejected'")
    miscounted = check.value("select count(*) from inbox_issue i where event_count <>"
                             " (select count(*) from inbox_event e where e.issue_id = i.id)")
    hottest = check.value("select max(event_count) from inbox_issue")
    check.engine.dispose()
    acknowledged = {str(envelope.parse(body, 10**6).headers["event_id"]) for body in outcome.acknowledged}
    figures.update(sent=len(outcome.sent), acknowledged=len(acknowledged), rows=rows, read=read, stored=len(stored),
                   rejected=rejected, miscounted_issues=miscounted, hottest_issue=hottest, read_at_kill=read_at_kill,
                   feeders_in_a_batch_at_restart=len(in_a_batch), after_restart=len(outcome.acknowledged) - back[0],
                   most_feeders_at_once=most_claiming, transport_errors=outcome.transport_errors,
                   seconds=f"killed {killed_at:.1f}, restarted {restarted_at:.1f}, posted {posted_at:.1f}, read {done_at:.1f}")
    assert most_claiming == 2  # both workers fed, at once
    assert acknowledged <= set(stored) and set(stored.values()) == {1}  # each acknowledged event once
    assert len(stored) == rows == read and rejected == 0 and miscounted == 0  # every row read once into one event
