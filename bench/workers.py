"""Scaling out: the tunnel with 1, 2 and 4 backend workers on PostgreSQL.

`app.standalone.tunnel` (the tunnel and outbox of the Reflex backend) under granian with N
workers, on a PostgreSQL database of its own (a private cluster started like the tests'
one, tests/services.py), in local mode (accepted envelopes are committed to the outbox and stay
there: what is measured is acceptance). The same load for each: wrk (or bench/loadgen.py) with
`--connections` keep-alive connections posting the ~2 KB browser error envelope of bench/envelope.py
for `--seconds`, after a warm-up. Afterwards the outbox must hold every envelope answered 200.

    .venv/bin/python -m bench.workers [--workers 1,2,4] [--seconds 10] [--connections 64]

Prints accepted envelopes/s, p50 and p99, and each row's ratio to one worker. Asserts nothing.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import sqlalchemy

from bench import envelope
from bench.harness.load import Load, LoadGenerator, load_generator
from bench.harness.lookout import NO_INTAKE_LIMITS, OUTBOX_CAP
from bench.harness.processes import Processes, workspace
from bench.harness.servers import free_port, granian, wait_ready
from tests import services

LOCAL_DSN = "http://bench@localhost/1"  # the local DSN the app under test is started with


@dataclass(frozen=True)
class Row:
    workers: int
    load: Load
    stored: int


def measure(server: services.Postgres, processes: Processes, generator: LoadGenerator, workers: int,
            seconds: int, warmup: int) -> Row:
    name = f"bench_{workers}_workers"
    admin = sqlalchemy.create_engine(server.url(), isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    port = free_port()
    key = f"lookout-{workers}"
    env = {"DATABASE_URL": server.url(name), "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN,
           "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP), "LOOKOUT_SERVER_MONITORING": "off", **NO_INTAKE_LIMITS}
    processes.start(key, granian("app.standalone.tunnel:app", port, workers=workers), env)
    try:
        wait_ready(processes, key, port, "/monitoring/stats")
        if warmup:
            generator.run(port, warmup)
        before = stored(server.url(name))
        load, _ = generator.run(port, seconds)
        return Row(workers, load, stored(server.url(name)) - before)
    finally:
        processes.stop(key)
        admin.dispose()


def stored(url: str) -> int:
    engine = sqlalchemy.create_engine(url, poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            return int(connection.exec_driver_sql("select count(*) from outbox").scalar_one())
    finally:
        engine.dispose()


def print_table(rows: list[Row]) -> None:
    base = rows[0].load.per_s if rows and rows[0].workers == 1 else None
    print(f"\n{'workers':>7}  {'accepted/s':>10}  {'p50 ms':>7}  {'p99 ms':>7}  {'non-2xx':>7}  {'stored':>7}"
          f"  {'vs 1 worker':>11}")
    for row in rows:
        ratio = f"{row.load.per_s / base:.2f}×" if base else "-"
        print(f"{row.workers:>7}  {row.load.per_s:>10.0f}  {row.load.p50_ms:>7.2f}  {row.load.p99_ms:>7.2f}  "
              f"{row.load.non_2xx:>7}  {row.stored:>7}  {ratio:>11}")
    for row in rows:
        if row.stored < row.load.accepted:
            print(f"!! {row.workers} workers: {row.load.accepted} answered 200 but {row.stored} stored")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", default="1,2,4", help="worker counts to measure (default 1,2,4)")
    parser.add_argument("--seconds", type=int, default=10, help="measured load per row (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up load per row (default 2)")
    parser.add_argument("--connections", type=int, default=64, help="concurrent keep-alive connections (default 64)")
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",")]
    with workspace() as (workdir, processes), services.postgres() as server:
        generator = load_generator(workdir, envelope.build(LOCAL_DSN), args.connections)
        print(f"tunnel on PostgreSQL, {args.connections} connections, {args.seconds} s per row, load: {generator.label}",
              flush=True)
        rows = []
        for workers in counts:
            print(f"  measuring {workers} worker{'s' if workers > 1 else ''} ...", flush=True)
            rows.append(measure(server, processes, generator, workers, args.seconds, args.warmup))
    print_table(rows)


if __name__ == "__main__":
    main()
