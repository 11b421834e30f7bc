"""The monitor watcher: a pass every `interval_s` (15 s), under a lease so that one worker makes it,
that notices what did not happen (app/monitors/states.py for the states and their alerts):

    missed    a monitor with a schedule whose next check-in was expected at T has none by
              T + checkin_margin: a "missed" check-in row (started_at T), the state missed, and the
              next check-in expected after now
    timeout   an in_progress check-in older than its monitor's max_runtime: the row becomes "timeout",
              the state timeout

`watch(engine, now)` is one pass, at `now` (the tests drive the clock); the watcher passes at
`time.time()`. A pass handles at most LIMIT monitors and runs of each kind (the next takes the rest),
in one transaction with their alerts. With a 15 s pass, a missed check-in is noticed within 15 s of
its deadline (the margin's end).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import anyio.to_thread
import sqlalchemy
from sqlalchemy import insert, select, update

from app.monitors import states
from app.monitors.checkins import keep_newest
from app.monitors.tables import CHECKINS, MONITORS
from reflex_lookout.background import FailureBackoff, Lease

logger = logging.getLogger(__name__)
LIMIT = 500
INTERVAL_S = 15.0
MAX_BACKOFF_S = 60.0

OVERDUE = select(MONITORS).where(
    MONITORS.c.next_expected_at.is_not(None), MONITORS.c.next_expected_at < sqlalchemy.bindparam("now"),
    MONITORS.c.next_expected_at + MONITORS.c.checkin_margin_min * 60 < sqlalchemy.bindparam("now"),
).order_by(MONITORS.c.next_expected_at).limit(LIMIT)
OVERRUN = select(CHECKINS.c.id.label("checkin_id"), CHECKINS.c.started_at, CHECKINS.c.environment,
                 CHECKINS.c.release, MONITORS).join(MONITORS, MONITORS.c.id == CHECKINS.c.monitor_id).where(
    CHECKINS.c.status == "in_progress", CHECKINS.c.started_at < sqlalchemy.bindparam("now"),
    CHECKINS.c.started_at + MONITORS.c.max_runtime_min * 60 < sqlalchemy.bindparam("now"),
).order_by(CHECKINS.c.started_at).limit(LIMIT)


@dataclass
class Passed:
    missed: int = 0  # missed check-ins recorded
    timeouts: int = 0  # runs that overran
    changes: int = 0  # state changes (each alerted but new → ok)


def watch(engine: sqlalchemy.Engine, now: float) -> Passed:
    """One pass at `now` (epoch seconds), in one transaction."""
    passed = Passed()
    with engine.begin() as connection:
        for monitor in connection.execute(OVERDUE, {"now": now}).all():
            due = float(monitor.next_expected_at)
            following = states.schedule_of(monitor).next_after(now)
            moved = connection.execute(update(MONITORS).where(
                MONITORS.c.id == monitor.id, MONITORS.c.next_expected_at == monitor.next_expected_at,
            ).values(next_expected_at=following)).rowcount
            if moved != 1:  # a check-in came in meanwhile
                continue
            connection.execute(insert(CHECKINS).values(monitor_id=monitor.id, check_in_id="", status="missed",
                                                       received_at=now, started_at=due))
            keep_newest(connection, monitor.id)
            passed.missed += 1
            detail = f" (margin {monitor.checkin_margin_min} min)"
            passed.changes += states.change(connection, monitor.project_id, monitor, "missed", now, due, detail)
        for run in connection.execute(OVERRUN, {"now": now}).all():
            timed_out = connection.execute(update(CHECKINS).where(
                CHECKINS.c.id == run.checkin_id, CHECKINS.c.status == "in_progress").values(status="timeout")).rowcount
            if timed_out != 1:
                continue
            passed.timeouts += 1
            monitor = connection.execute(select(MONITORS).where(MONITORS.c.id == run.id)).one()
            detail = f" after {monitor.max_runtime_min} min (its max_runtime)"
            passed.changes += states.change(connection, monitor.project_id, monitor, "timeout", now, run.started_at,
                                            detail, run.environment, run.release)
    return passed


class MonitorWatcher:
    """Makes a `watch` pass every `interval_s` while this worker holds `lease`."""

    def __init__(self, engine: sqlalchemy.Engine, lease: Lease, interval_s: float = INTERVAL_S,
                 on_alert: Callable[[], None] | None = None) -> None:
        self.engine, self.lease, self.interval_s, self.on_alert = engine, lease, interval_s, on_alert
        self.passes = 0
        self.failures = 0

    async def run(self) -> None:
        try:
            await self._run()
        finally:
            await anyio.to_thread.run_sync(self.lease.release)

    async def _run(self) -> None:
        backoff = FailureBackoff("monitor watcher", MAX_BACKOFF_S, logger)
        while True:
            try:
                await self.step(time.time())
            except Exception as exc:  # noqa: BLE001 (FailureBackoff logs it; the database away, or a bug: the next pass tries)
                self.failures += 1
                await asyncio.sleep(backoff.failed(exc, self.interval_s))
                continue
            backoff.succeeded()
            await asyncio.sleep(self.interval_s)

    async def step(self, now: float) -> Passed | None:
        """One pass at `now` when this worker holds the lease (None: another worker watches)."""
        if not await anyio.to_thread.run_sync(self.lease.keep):
            return None
        passed = await anyio.to_thread.run_sync(watch, self.engine, now)
        self.passes += 1
        if passed.changes and self.on_alert is not None:
            self.on_alert()  # the alert sender: its rows are committed
        return passed
