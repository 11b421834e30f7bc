"""The background work of a backend process, in two parts.

**Supervision** keeps a background task of the backend running: `supervise(name, run)` starts `run()` as a task
and, whenever it ends (by an error, or by returning), logs it and starts it again after a pause that
doubles with each quick end, from `BASE_S` up to `MAX_S`; a run that lasted `STEADY_S` resets the
pause. Cancelling the supervising task cancels the run and stops there, as shutdown needs.

The forwarder and the inbox feeder catch what they expect and log what they do not; this is the
last line, for an error that escapes them anyway (or a bug in their loops), so that one bad turn
never stops delivery or the inbox until the next restart.

**Backoff** (`FailureBackoff`): how long a pass that failed waits before the next, doubling with each
failure in a row up to a cap; each failure logged with its wait.

**Leases**: one holder at a time, across backend workers and processes, for work that must not run
twice at once (the forwarder delivering the outbox, the inbox feeder reading it).

A lease is a row (name, holder, until) of `worker_lease` (tables.py) in the outbox's database. `Lease.hold()` takes the lease when
it is free or expired, or renews it when this holder has it, in one conditional UPDATE (or the
INSERT that creates the row): on PostgreSQL the row lock makes concurrent takers wait and then
re-check the condition, on SQLite writes are serialised, so on both exactly one taker wins. A
holder renews well within `ttl_s`; when a worker dies (even by SIGKILL) its lease expires and
another worker takes over. Work that was in flight when a holder died may be done again (an
envelope sent but not yet removed is sent again; Sentry drops a repeated event_id).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import sqlalchemy
from sqlalchemy import insert, or_, update

from reflex_lookout.tables import WORKER_LEASE as TABLE

logger = logging.getLogger(__name__)

BASE_S = 1.0
MAX_S = 60.0
STEADY_S = 60.0


def supervise(name: str, run: Callable[[], Coroutine[Any, Any, None]], base_s: float = BASE_S,
              max_s: float = MAX_S, steady_s: float = STEADY_S) -> asyncio.Task[None]:
    """A task running `run()` again and again until it is cancelled (see the module's docstring)."""
    return asyncio.create_task(_keep_running(name, run, base_s, max_s, steady_s), name=name)


async def _keep_running(name: str, run: Callable[[], Coroutine[Any, Any, None]], base_s: float,
                        max_s: float, steady_s: float) -> None:
    pause = base_s
    while True:
        started = time.monotonic()
        try:
            await run()
            logger.error("%s stopped by itself; starting it again in %.1f s", name, pause)
        except Exception:
            logger.exception("%s failed; starting it again in %.1f s", name, pause)
        pause = base_s if time.monotonic() - started >= steady_s else pause
        await asyncio.sleep(pause)
        pause = min(pause * 2, max_s)


TTL_S = 10.0  # a dead holder's work resumes elsewhere within this
RENEW_S = 2.0  # holders renew this often (the forwarder's and feeder's loops wake at least this often)


def holder_name() -> str:
    """This process's name as a holder: host, pid and a random part (pids repeat after restarts)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class FailureBackoff:
    """The waits of a background pass that failed `in_a_row` times: `base_s` doubling, at most `cap_s`.
    Each failure is logged on `log` as "<name>: <error>; trying again in <wait> s" (with the traceback
    unless it is a database error: locked or away)."""

    def __init__(self, name: str, cap_s: float, log: logging.Logger) -> None:
        self.name, self.cap_s, self.log = name, cap_s, log
        self.in_a_row = 0

    def failed(self, exc: Exception, base_s: float) -> float:
        """The wait after `exc`, logged; the next failure waits twice as long (up to the cap)."""
        wait = min(base_s * 2**self.in_a_row, self.cap_s)
        self.in_a_row += 1
        self.log.warning("%s: %s; trying again in %.1f s", self.name, exc, wait,
                         exc_info=not isinstance(exc, sqlalchemy.exc.SQLAlchemyError))
        return wait

    def succeeded(self) -> None:
        self.in_a_row = 0


class Lease:
    def __init__(self, engine: sqlalchemy.Engine, name: str, holder: str | None = None, ttl_s: float = TTL_S,
                 clock: Callable[[], float] = time.time) -> None:
        self.engine, self.name, self.ttl_s, self.clock = engine, name, ttl_s, clock
        self.holder = holder or holder_name()
        self.held = False
        self._renewed_at = float("-inf")

    def keep(self) -> bool:
        """Whether this holder has the lease, renewing it when RENEW_S have passed (or taking it)."""
        if self.held and self.clock() - self._renewed_at < RENEW_S:
            return True
        return self.hold()

    def hold(self) -> bool:
        """Take or renew the lease; whether this holder has it now (False if the database fails)."""
        now = self.clock()
        try:
            with self.engine.begin() as connection:
                renewed = connection.execute(
                    update(TABLE)
                    .where(TABLE.c.name == self.name, or_(TABLE.c.holder == self.holder, TABLE.c.until < now))
                    .values(holder=self.holder, until=now + self.ttl_s)
                ).rowcount
                if not renewed:
                    if connection.execute(sqlalchemy.select(TABLE.c.name).where(TABLE.c.name == self.name)).first():
                        self.held = False
                        return False
                    connection.execute(insert(TABLE).values(name=self.name, holder=self.holder, until=now + self.ttl_s))
        except sqlalchemy.exc.IntegrityError:  # another taker created it first
            self.held = False
            return False
        except sqlalchemy.exc.SQLAlchemyError:
            # The database is away: nobody can take the lease meanwhile, so a holder keeps it until
            # it would have expired (stopping work mid-way would only make it be done twice).
            self.held = self.held and now < self._renewed_at + self.ttl_s
            return self.held
        self.held, self._renewed_at = True, now
        return True

    def release(self) -> None:
        """Give the lease up (on shutdown), so another worker need not wait for it to expire."""
        if not self.held:
            return
        try:
            with self.engine.begin() as connection:
                connection.execute(update(TABLE).where(TABLE.c.name == self.name, TABLE.c.holder == self.holder)
                                   .values(until=0.0))
        except sqlalchemy.exc.SQLAlchemyError:
            pass
        self.held = False
