"""Retention: the inbox keeps at most so many events per project, none older than so many days, at
most so many issues per project, and at most so many bytes in all.

Events over the count cap go from the biggest issues first (the issue with the most stored events
loses its oldest, until it is no bigger than the next), so a flood of one error cannot push out
the only event of another. Every issue keeps its first and its latest event whatever the count and
age caps say. Transactions and log lines have count and age caps of their own (oldest first); sessions
too, folding their oldest into hourly counts first (app/releases/session_retention.py); so do
the envelopes the feeder has read (outbox rows in `inbox_read`) that no kept event is stored in, and
the rows it rejected. An envelope goes when its last kept event does, within that cap. An issue's
event count stays what it was: it counts what happened, not what is kept.

Past the issue cap, the least seen issues (and among equals the longest unseen) go whole, with their
events. Last, the byte budget (app/inbox/budget.py) takes the oldest of everything, and whole issues
if it must, until the inbox fits: a flood of huge unique errors can fill neither the disk nor the
outbox, whose cap counts only rows still waiting (reflex_lookout/outbox.py).

It runs in one worker at a time: the feeder holding the "inbox-retention" lease runs it when due,
renewing the lease while it runs (app/ingest/feeder.py; on PostgreSQL every worker feeds).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import delete, exists, func, select

from app.inbox.budget import InboxBudget
from app.inbox.eviction import ISSUE_RANK, delete_issues
from app.inbox.tables import EVENTS, ISSUES, LOGS, READ, TRANSACTIONS
from app.releases.session_retention import keep_sessions
from app.settings import Settings
from app.tables import chunks
from reflex_lookout.outbox import REJECTED
from reflex_lookout.tables import OUTBOX

DAY = 86400.0


@dataclass(frozen=True)
class Caps:
    events: int = 10_000  # per project
    transactions: int = 10_000  # per project
    logs: int = 50_000  # per project
    raw_envelopes: int = 5_000  # read outbox rows no kept event is stored in, all projects
    max_age_days: float = 30.0
    issues: int = 10_000  # per project
    max_bytes: int = 1024 * 1024 * 1024  # everything the inbox keeps (app/inbox/budget.py)
    sessions: int = 100_000  # rows per project (app/releases/session_retention.py)

    @classmethod
    def from_settings(cls, settings: Settings) -> Caps:
        return cls(settings.inbox_max_events, settings.inbox_max_transactions, settings.inbox_max_logs,
                   settings.inbox_max_raw_envelopes, float(settings.inbox_max_age_days),
                   settings.inbox_max_issues, settings.inbox_max_bytes, settings.inbox_max_sessions)


@dataclass
class Evicted:
    events: int = 0
    transactions: int = 0
    logs: int = 0
    raw_envelopes: int = 0
    rejected: int = 0  # outbox rows the feeder could not read
    issues: int = 0  # whole issues, past the issue cap or the byte budget
    feedback: int = 0
    sessions: int = 0  # session rows past the age cap, or over the row cap (folded ones are kept)


class Retention:
    def __init__(self, engine: sqlalchemy.Engine, caps: Caps) -> None:
        self.engine = engine
        self.caps = caps

    def run(self, now: float | None = None) -> Evicted:
        cutoff = (time.time() if now is None else now) - self.caps.max_age_days * DAY
        evicted = Evicted()
        with self.engine.begin() as connection:
            protected = self._protected(connection)
            old = select(EVENTS.c.id).where(EVENTS.c.received_at < cutoff)
            expired = [i for i in connection.execute(old).scalars() if i not in protected]
            evicted.events += self._delete_events(connection, expired)
            projects = connection.execute(select(EVENTS.c.project_id).distinct()).scalars().all()
            for project_id in projects:
                evicted.events += self._over_count(connection, project_id, protected)
            evicted.transactions = self._oldest_first(connection, TRANSACTIONS, TRANSACTIONS.c.received_at, cutoff,
                                                      self.caps.transactions)
            evicted.logs = self._oldest_first(connection, LOGS, LOGS.c.timestamp, cutoff, self.caps.logs)
            evicted.raw_envelopes = self._raw(connection, cutoff)
            kept = keep_sessions(connection, cutoff, self.caps.sessions)
            evicted.sessions = kept.expired + kept.dropped
            evicted.rejected = connection.execute(
                delete(OUTBOX).where(OUTBOX.c.status == REJECTED, OUTBOX.c.received_at < cutoff)).rowcount or 0
        evicted.issues = self._over_issue_cap()
        self._within_budget(evicted)
        return evicted

    def _over_issue_cap(self) -> int:
        """Delete, per project, the issues past the cap: the least seen, then the longest unseen."""
        with self.engine.begin() as connection:
            counts = connection.execute(select(ISSUES.c.project_id, func.count()).group_by(ISSUES.c.project_id)).all()
            doomed = [issue_id for project_id, count in counts if count > self.caps.issues
                      for issue_id in connection.execute(
                          select(ISSUES.c.id).where(ISSUES.c.project_id == project_id)
                          .order_by(*ISSUE_RANK).limit(count - self.caps.issues)).scalars()]
            return delete_issues(connection, doomed)

    def _within_budget(self, evicted: Evicted) -> None:
        gone = InboxBudget(self.engine, self.caps.max_bytes).enforce()
        evicted.events += gone["events"]
        evicted.transactions += gone["transactions"]
        evicted.logs += gone["logs"]
        evicted.raw_envelopes += gone["raw_envelopes"]
        evicted.rejected += gone["rejected"]
        evicted.feedback += gone["feedback"]
        evicted.issues += gone["issues"]

    def _protected(self, connection: sqlalchemy.Connection) -> set[int]:
        """Every issue's first and latest stored event."""
        rows = connection.execute(select(func.min(EVENTS.c.id), func.max(EVENTS.c.id)).group_by(EVENTS.c.issue_id))
        return {event_id for pair in rows for event_id in pair}

    def _over_count(self, connection: sqlalchemy.Connection, project_id: int, protected: set[int]) -> int:
        counts: dict[int, int] = dict(connection.execute(
            select(EVENTS.c.issue_id, func.count()).where(EVENTS.c.project_id == project_id).group_by(EVENTS.c.issue_id)
        ).all())
        excess = sum(counts.values()) - self.caps.events
        if excess <= 0:
            return 0
        # How many each issue gives up: repeatedly the biggest, down to the next biggest's size.
        heap = [(-count, issue_id) for issue_id, count in counts.items() if count > 2]
        heapq.heapify(heap)
        taking: dict[int, int] = {}
        while excess > 0 and heap:
            negative, issue_id = heapq.heappop(heap)
            size = -negative
            floor = max(2, -heap[0][0] if heap else 2)
            take = min(excess, max(1, size - floor), size - 2)
            if take <= 0:
                continue
            taking[issue_id] = taking.get(issue_id, 0) + take
            excess -= take
            if size - take > 2:
                heapq.heappush(heap, (-(size - take), issue_id))
        doomed: list[int] = []
        for issue_id, take in taking.items():
            oldest = connection.execute(
                select(EVENTS.c.id).where(EVENTS.c.issue_id == issue_id).order_by(EVENTS.c.id).limit(take + 2)
            ).scalars().all()
            doomed.extend([event_id for event_id in oldest if event_id not in protected][:take])
        return self._delete_events(connection, doomed)

    def _delete_events(self, connection: sqlalchemy.Connection, ids: list[int]) -> int:
        for chunk in chunks(ids):
            connection.execute(delete(EVENTS).where(EVENTS.c.id.in_(chunk)))
        return len(ids)

    def _oldest_first(self, connection: sqlalchemy.Connection, table: sqlalchemy.Table, at: sqlalchemy.Column,
                      cutoff: float, cap: int) -> int:
        removed = connection.execute(delete(table).where(at < cutoff)).rowcount or 0
        for project_id in connection.execute(select(table.c.project_id).distinct()).scalars().all():
            keep_from = connection.execute(
                select(table.c.id).where(table.c.project_id == project_id).order_by(table.c.id.desc()).offset(cap).limit(1)
            ).scalar()
            if keep_from is not None:
                removed += connection.execute(
                    delete(table).where(table.c.project_id == project_id, table.c.id <= keep_from)
                ).rowcount or 0
        return removed

    def _raw(self, connection: sqlalchemy.Connection, cutoff: float) -> int:
        """Read envelopes no kept event is stored in: those older than the age cap, and all but the
        newest `raw_envelopes`."""
        spare = (select(OUTBOX.c.id, OUTBOX.c.received_at).join(READ, READ.c.outbox_id == OUTBOX.c.id)
                 .where(~exists().where(EVENTS.c.envelope_id == OUTBOX.c.id)).subquery())
        ids = list(connection.execute(select(spare.c.id).where(spare.c.received_at < cutoff)).scalars())
        ids += connection.execute(
            select(spare.c.id).where(spare.c.received_at >= cutoff).order_by(spare.c.id.desc()).offset(self.caps.raw_envelopes)
        ).scalars().all()
        for chunk in chunks(ids):
            connection.execute(delete(OUTBOX).where(OUTBOX.c.id.in_(chunk)))
            connection.execute(delete(READ).where(READ.c.outbox_id.in_(chunk)))
        return len(ids)
