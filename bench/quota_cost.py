"""What per-project quotas cost ingest: the same error events posted to Sentry's
`POST /api/1/envelope/?sentry_key=...` of `app.standalone.inbox` (the ingest endpoints, the tunnel
and outbox, the feeder, as in the Reflex backend) under granian, on a SQLite file, with no quota and
with a quota set that none of them reaches (1,000,000 a minute, 60,000,000 an hour), in the same run:
one server per worker count, the two variants alternating (each first in half of the rounds).

A quota is set by writing the project's options into the database, as the settings page does; the
workers read it within CACHE_S, so each round waits that long before its warm-up. With a quota, every
event is counted in `inbox_quota_count` (app/ingest/quotas.py: each worker syncs once per tenth of
what is left of a window, so with a quota this far off about once a minute); the bench checks that
the workers counted.

    .venv/bin/python -m bench.quota_cost [--events 2000] [--size 2000] [--rounds 4] [--workers 1,2]

Rate = envelopes / seconds from the first request to the last answer, 8 keep-alive httpx clients;
every answer must be 2xx. Prints figures; raises only if an envelope is refused or not counted.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

import sqlalchemy

from app import db
from app.inbox.tables import QUOTA_COUNTS
from app.projects.options_store import CACHE_S, ProjectOptionsStore
from app.projects.quota_options import MAX_PER_HOUR, MAX_PER_MINUTE, QuotaOptions
from bench.harness.lookout import OUTBOX_CAP
from bench.harness.processes import workspace
from bench.harness.servers import free_port, granian, wait_ready
from bench.inbox_ingest import envelopes
from bench.spotlight_accept import post_all

LOCAL_DSN = "http://bench@localhost/1"
VARIANTS = {"no quota": QuotaOptions(), "a quota set": QuotaOptions(MAX_PER_MINUTE, MAX_PER_HOUR)}
WARM_UP = 200


def synced(engine: sqlalchemy.Engine) -> int:
    """The events the workers have added to this minute's or the last minute's window."""
    with engine.connect() as connection:
        return int(connection.execute(sqlalchemy.select(sqlalchemy.func.coalesce(sqlalchemy.func.sum(
            QUOTA_COUNTS.c.count), 0)).where(QUOTA_COUNTS.c.seconds == 60,
                                             QUOTA_COUNTS.c.slot >= int(time.time() // 60) - 1)).scalar_one())


def measure(workers: int, args: argparse.Namespace) -> dict[str, list[float]]:
    """{variant: events/s of each round} for one server of `workers` workers."""
    rates: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with workspace() as (workdir, processes):
        db_path, port = workdir / "lookout.db", free_port()
        env = {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN,
               "LOOKOUT_SERVER_MONITORING": "off", "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP)}
        processes.start("lookout", granian("app.standalone.inbox:app", port, workers=workers), env)
        wait_ready(processes, "lookout", port, "/")
        engine = db.engine(f"sqlite:///{db_path}")
        url = f"http://127.0.0.1:{port}/api/1/envelope/?sentry_key=bench"
        for round_ in range(args.rounds):
            names = list(VARIANTS) if round_ % 2 == 0 else list(reversed(VARIANTS))
            for name in names:
                ProjectOptionsStore(engine).set_quotas(1, VARIANTS[name], by="bench")
                time.sleep(CACHE_S + 0.5)  # every worker has read it again
                asyncio.run(post_all(url, envelopes(WARM_UP, args.size), 8))
                bodies = envelopes(args.events, args.size)
                seconds = asyncio.run(post_all(url, bodies, 8))
                rates[name].append(args.events / seconds)
                if name != "no quota" and synced(engine) == 0:
                    raise RuntimeError("the quota was set, but no worker counted an event")
                print(f"  {workers} worker(s), {name}: {rates[name][-1]:.1f} events/s", flush=True)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--size", type=int, default=2000, help="bytes of each event (about)")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    print(f"{args.events} error events of ~{args.size} bytes per round, {args.rounds} rounds, "
          f"POST /api/1/envelope/, 8 clients", flush=True)
    lines = []
    for workers in (int(w) for w in args.workers.split(",")):
        rates = measure(workers, args)
        medians = {name: statistics.median(values) for name, values in rates.items()}
        for name, values in rates.items():
            lines.append(f"{workers} worker(s)  {name:<12} {medians[name]:8.1f} events/s   (median; "
                         f"{', '.join(f'{v:.0f}' for v in values)})")
        lines.append(f"{workers} worker(s)  with / without = {medians['a quota set'] / medians['no quota']:.3f}")
    print("\n".join(["", *lines]))


if __name__ == "__main__":
    main()
