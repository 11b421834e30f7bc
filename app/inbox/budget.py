"""The inbox's byte budget (LOOKOUT_INBOX_MAX_BYTES): what the inbox keeps is measured, and past the
budget the oldest of it gives way until it fits.

Measured: the outbox rows the inbox holds (the envelopes it has read, which hold its events as sent,
and the rows it rejected), by their size as received; events kept as text of their own;
transactions; log lines; feedback. Rows still waiting to be read are the outbox's, under its own
cap, and never touched here.

Over the budget, each kind gives up its oldest rows in proportion to its share of the whole (so what
floods shrinks most, and a little of the rest goes too): rejected rows, read envelopes no kept event
is stored in, events other than each issue's first and latest, transactions, log lines, feedback.
When that is not enough (every issue down to its first and latest event, and those huge), whole
issues go, the least seen first and, among equals, the longest unseen. Deletions are committed in
small batches, so the tunnel's writes never wait long for the database.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import delete, exists, func, select

from app.inbox.eviction import ISSUE_RANK, delete_events, delete_issues, stored_bytes
from app.inbox.tables import EVENTS, FEEDBACK, ISSUES, LOGS, READ, TRANSACTIONS
from reflex_lookout.outbox import REJECTED
from reflex_lookout.tables import OUTBOX

BATCH = 200  # rows deleted per transaction
MAX_ROUNDS = 20  # measure-and-evict rounds per run, however little each frees

_READ = exists().where(READ.c.outbox_id == OUTBOX.c.id)
_HOLDS_EVENTS = exists().where(EVENTS.c.envelope_id == OUTBOX.c.id)
_FIRST_OR_LATEST = select(func.min(EVENTS.c.id)).group_by(EVENTS.c.issue_id).union(
    select(func.max(EVENTS.c.id)).group_by(EVENTS.c.issue_id))
_EVENT_BYTES = func.coalesce(OUTBOX.c.size, 0) + stored_bytes(EVENTS.c.payload)


def _sum(value: sqlalchemy.ColumnElement[int]) -> sqlalchemy.ColumnElement[int]:
    return func.coalesce(func.sum(value), 0)


@dataclass(frozen=True)
class Kind:
    """One kind of what the inbox keeps: how big it all is, its evictable rows oldest first as
    (id, bytes), and how to delete some of them."""

    name: str
    total: sqlalchemy.Select[int]
    oldest: sqlalchemy.Select[int, int]
    delete: Callable[[sqlalchemy.Connection, list[int]], int]


def _deleting(table: sqlalchemy.Table) -> Callable[[sqlalchemy.Connection, list[int]], int]:
    def run(connection: sqlalchemy.Connection, ids: list[int]) -> int:
        if table is OUTBOX:
            connection.execute(delete(READ).where(READ.c.outbox_id.in_(ids)))
        return connection.execute(delete(table).where(table.c.id.in_(ids))).rowcount or 0
    return run


def _feedback_bytes() -> sqlalchemy.ColumnElement[int]:
    return (stored_bytes(FEEDBACK.c.name) + stored_bytes(FEEDBACK.c.email) + stored_bytes(FEEDBACK.c.message)
            + stored_bytes(FEEDBACK.c.url) + stored_bytes(FEEDBACK.c.release))


KINDS = (
    Kind("rejected", select(_sum(OUTBOX.c.size)).where(OUTBOX.c.status == REJECTED),
         select(OUTBOX.c.id, OUTBOX.c.size).where(OUTBOX.c.status == REJECTED), _deleting(OUTBOX)),
    Kind("raw_envelopes", select(_sum(OUTBOX.c.size)).where(_READ, ~_HOLDS_EVENTS),
         select(OUTBOX.c.id, OUTBOX.c.size).where(_READ, ~_HOLDS_EVENTS), _deleting(OUTBOX)),
    # Events are measured as the envelopes that hold them plus any text of their own.
    Kind("events", select(_sum(OUTBOX.c.size)).where(_READ, _HOLDS_EVENTS).add_columns(
            select(_sum(stored_bytes(EVENTS.c.payload))).scalar_subquery()),
         select(EVENTS.c.id, _EVENT_BYTES).select_from(EVENTS.outerjoin(OUTBOX, OUTBOX.c.id == EVENTS.c.envelope_id))
         .where(EVENTS.c.id.not_in(_FIRST_OR_LATEST)), delete_events),
    Kind("transactions", select(_sum(stored_bytes(TRANSACTIONS.c.payload))),
         select(TRANSACTIONS.c.id, stored_bytes(TRANSACTIONS.c.payload)), _deleting(TRANSACTIONS)),
    Kind("logs", select(_sum(stored_bytes(LOGS.c.body) + stored_bytes(LOGS.c.attributes))),
         select(LOGS.c.id, stored_bytes(LOGS.c.body) + stored_bytes(LOGS.c.attributes)), _deleting(LOGS)),
    Kind("feedback", select(_sum(_feedback_bytes())), select(FEEDBACK.c.id, _feedback_bytes()), _deleting(FEEDBACK)),
)


class InboxBudget:
    def __init__(self, engine: sqlalchemy.Engine, max_bytes: int) -> None:
        self.engine = engine
        self.max_bytes = max_bytes

    def measure(self) -> dict[str, int]:
        """Bytes kept, per kind."""
        with self.engine.connect() as connection:
            return {kind.name: sum(int(v) for v in connection.execute(kind.total).one()) for kind in KINDS}

    def enforce(self) -> dict[str, int]:
        """Evict until the inbox fits its budget; what went, per kind (and "issues")."""
        evicted = {kind.name: 0 for kind in KINDS} | {"issues": 0}
        for _ in range(MAX_ROUNDS):
            sizes = self.measure()
            total = sum(sizes.values())
            over = total - self.max_bytes
            if over <= 0:
                break
            freed = 0
            for kind in KINDS:
                if sizes[kind.name]:
                    share = math.ceil(over * sizes[kind.name] / total)
                    gone, bytes_gone = self._oldest(kind, share)
                    evicted[kind.name] += gone
                    freed += bytes_gone
            if freed < over:  # the rest is every issue's first and latest event
                gone, bytes_gone = self._issues(over - freed)
                evicted["issues"] += gone
                freed += bytes_gone
            if freed == 0:
                break  # nothing left that may go
        return evicted

    def _oldest(self, kind: Kind, wanted: int) -> tuple[int, int]:
        """Delete `kind`'s oldest rows until `wanted` bytes went: (rows, bytes)."""
        rows = freed = 0
        while freed < wanted:
            with self.engine.begin() as connection:
                batch = connection.execute(kind.oldest.order_by(kind.oldest.selected_columns[0]).limit(BATCH)).all()
                taken = []
                for row_id, size in batch:
                    if freed >= wanted:
                        break
                    taken.append(row_id)
                    freed += int(size or 0) or 1  # an empty row frees little, but must count
                if taken:
                    kind.delete(connection, taken)
            rows += len(taken)
            if len(batch) < BATCH or not taken:
                break
        return rows, freed

    def _issues(self, wanted: int) -> tuple[int, int]:
        """Delete whole issues, in ISSUE_RANK order, until `wanted` bytes went: (issues, bytes)."""
        sizes = (select(ISSUES.c.id, _sum(_EVENT_BYTES))
                 .select_from(ISSUES.outerjoin(EVENTS, EVENTS.c.issue_id == ISSUES.c.id)
                              .outerjoin(OUTBOX, OUTBOX.c.id == EVENTS.c.envelope_id))
                 .group_by(ISSUES.c.id, *ISSUE_RANK[:2]).order_by(*ISSUE_RANK))
        issues = freed = 0
        while freed < wanted:
            with self.engine.begin() as connection:
                taken = []
                for issue_id, size in connection.execute(sizes.limit(BATCH)).all():
                    if freed >= wanted:
                        break
                    taken.append(issue_id)
                    freed += int(size or 0) or 1
                delete_issues(connection, taken)
            issues += len(taken)
            if not taken:
                break
        return issues, freed
