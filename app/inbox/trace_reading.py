"""Read access to transactions (traces) and log lines, for the console's /traces, /trace and /logs
pages (`TraceReader`): lists filtered by a search in the triage search's syntax where it applies
(app/inbox/trace_search.py), a project, environment and release; one trace's transactions, errors
and log lines."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy
from sqlalchemy import select

from app.inbox.tables import EVENTS, LOGS, TRANSACTIONS
from app.inbox.trace_search import transaction_condition
from app.projects.tables import PROJECTS
from app.protocol.fields import seconds
from app.tables import chunks
from reflex_lookout.protocol import payloads

logger = logging.getLogger(__name__)


def _stored_transaction(payload: str) -> dict[str, Any] | None:
    """A stored transaction (None if it cannot be read: that transaction's problem, never the page's)."""
    try:
        return payloads.load_object(payload)
    except payloads.UnreadablePayload as exc:
        logger.warning("a stored transaction cannot be read: %s", exc)
        return None


TRANSACTION_COLUMNS = (
    TRANSACTIONS.c.id, TRANSACTIONS.c.event_id, TRANSACTIONS.c.trace_id, TRANSACTIONS.c.name, TRANSACTIONS.c.op,
    TRANSACTIONS.c.status, TRANSACTIONS.c.platform, TRANSACTIONS.c.start, TRANSACTIONS.c.duration_ms,
    TRANSACTIONS.c.span_count, TRANSACTIONS.c.received_at,
)

TRACE_ROW_COLUMNS = (*(column.name for column in TRANSACTION_COLUMNS), "span_id", "parent_span_id")
TRACE_TRANSACTIONS = 100  # of one trace in the list (the earliest); its page shows every one


class TraceReader:
    """Read access to transactions (traces) and log lines."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def transactions(self, limit: int = 50, offset: int = 0, search: str = "", *, project_id: int | None = None,
                     environment: str = "", release: str = "") -> tuple[list[dict[str, Any]], int]:
        """Transactions, newest first, and how many match: `search` in the triage search's syntax where
        it applies (app/inbox/trace_search.py; `SearchError` if it does not parse), of the project,
        environment and release given (exactly; None or "": any)."""
        condition = transaction_condition(search) & narrowed(TRANSACTIONS, project_id, environment, release)
        with self.engine.connect() as connection:
            total = connection.execute(
                select(sqlalchemy.func.count()).select_from(TRANSACTIONS).where(condition)
            ).scalar_one()
            rows = connection.execute(
                select(*TRANSACTION_COLUMNS).where(condition)
                .order_by(TRANSACTIONS.c.id.desc()).limit(limit).offset(offset)
            ).mappings().all()
        return [dict(row) for row in rows], int(total)

    def traces(self, limit: int = 50, offset: int = 0, search: str = "", *, project_id: int | None = None,
               environment: str = "", release: str = "") -> tuple[list[dict[str, Any]], int]:
        """Traces that have a transaction matching `search` and the filters (as `transactions` reads
        them), the one with the transaction received last first, and how many match. Each is
        {"trace_id", "count": its transactions stored, "transactions": the TRACE_TRANSACTIONS earliest
        of them, whichever matched, earliest first, with their span and parent span ids}. A transaction
        sent without a trace id is a trace of its own."""
        condition = transaction_condition(search) & narrowed(TRANSACTIONS, project_id, environment, release)
        lone = sqlalchemy.case((TRANSACTIONS.c.trace_id == "", TRANSACTIONS.c.id), else_=0)  # 0: of a trace id
        last = sqlalchemy.func.max(TRANSACTIONS.c.id)
        with self.engine.connect() as connection:
            total = connection.execute(select(sqlalchemy.func.count()).select_from(
                select(TRANSACTIONS.c.trace_id, lone).where(condition).group_by(TRANSACTIONS.c.trace_id, lone).subquery()
            )).scalar_one()
            keys = connection.execute(
                select(TRANSACTIONS.c.trace_id, lone).where(condition).group_by(TRANSACTIONS.c.trace_id, lone)
                .order_by(last.desc()).limit(limit).offset(offset)
            ).tuples().all()
            members = sqlalchemy.or_(
                TRANSACTIONS.c.trace_id.in_([trace_id for trace_id, alone in keys if not alone]),
                TRANSACTIONS.c.id.in_([alone for _, alone in keys if alone]),
            )
            ranked = select(
                *TRANSACTION_COLUMNS, TRANSACTIONS.c.span_id, TRANSACTIONS.c.parent_span_id, lone.label("lone"),
                sqlalchemy.func.row_number().over(partition_by=(TRANSACTIONS.c.trace_id, lone),
                                                  order_by=(TRANSACTIONS.c.start, TRANSACTIONS.c.id)).label("place"),
                sqlalchemy.func.count().over(partition_by=(TRANSACTIONS.c.trace_id, lone)).label("stored"),
            ).where(members).subquery()
            rows = connection.execute(
                select(ranked).where(ranked.c.place <= TRACE_TRANSACTIONS).order_by(ranked.c.place)
            ).mappings().all() if keys else []
        found: dict[tuple[str, int], dict[str, Any]] = {
            key: {"trace_id": key[0], "count": 0, "transactions": []} for key in keys}
        for row in rows:
            trace = found[(row["trace_id"], row["lone"])]
            trace["count"] = int(row["stored"])
            trace["transactions"].append({name: row[name] for name in TRACE_ROW_COLUMNS})
        return list(found.values()), int(total)

    def trace(self, trace_id: str) -> list[dict[str, Any]]:
        """Every stored transaction of the trace, as sent (spans included), earliest first."""
        with self.engine.connect() as connection:
            stored = connection.execute(
                select(TRANSACTIONS.c.payload).where(TRANSACTIONS.c.trace_id == trace_id.lower())
                .order_by(TRANSACTIONS.c.start)
            ).scalars().all()
        return [found for payload in stored if (found := _stored_transaction(payload)) is not None]

    def trace_errors(self, trace_id: str, limit: int = 100) -> list[dict[str, Any]]:
        """The error events stored for the trace (from 0016 on), earliest first: their issue, id,
        title, level and time."""
        if not trace_id:
            return []
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(EVENTS.c.issue_id, EVENTS.c.event_id, EVENTS.c.title, EVENTS.c.level, EVENTS.c.timestamp,
                       EVENTS.c.received_at)
                .where(EVENTS.c.trace_id == trace_id.lower()).order_by(EVENTS.c.received_at, EVENTS.c.id).limit(limit)
            ).mappings().all()
        return [{**row, "timestamp": seconds(row["timestamp"]) or row["received_at"]} for row in rows]

    def trace_logs(self, trace_id: str, limit: int = 200) -> list[dict[str, Any]]:
        """The trace's log lines, earliest first."""
        if not trace_id:
            return []
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(*LOG_COLUMNS).where(LOGS.c.trace_id == trace_id.lower())
                .order_by(LOGS.c.timestamp, LOGS.c.id).limit(limit)
            ).mappings().all()
        return _log_lines(rows)

    def issues_of_traces(self, trace_ids: Sequence[str]) -> dict[str, int]:
        """For each of `trace_ids` that has an error stored, an issue of it (the oldest such issue)."""
        wanted = sorted({t.lower() for t in trace_ids if t})
        found: dict[str, int] = {}
        with self.engine.connect() as connection:
            for part in chunks(wanted):
                found.update(connection.execute(
                    select(EVENTS.c.trace_id, sqlalchemy.func.min(EVENTS.c.issue_id))
                    .where(EVENTS.c.trace_id.in_(part)).group_by(EVENTS.c.trace_id)
                ).tuples().all())
        return found

    def logs(self, limit: int = 200, level: str = "", search: str = "", *, project_id: int | None = None,
             environment: str = "", release: str = "") -> list[dict[str, Any]]:
        """Log lines, newest first (`level`: exactly; `search`: in the body; of the project, environment
        and release given, exactly, None or "" for any)."""
        condition = narrowed(LOGS, project_id, environment, release)
        if level:
            condition = condition & (LOGS.c.level == level)
        if search.strip():
            condition = condition & sqlalchemy.func.lower(LOGS.c.body).like(f"%{search.strip().lower()}%")
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(*LOG_COLUMNS).where(condition).order_by(LOGS.c.id.desc()).limit(limit)
            ).mappings().all()
        return _log_lines(rows)

    def facets(self, of: str = "transactions") -> dict[str, list[str]]:
        """What /traces (`of` "transactions") or /logs ("logs") offer to filter by: the projects with
        any ("id · name"), and the FACET_VALUES environments and releases seen most recently, newest
        first (from the (environment, id) and (release, id) indexes; retention caps the rows read)."""
        table = LOGS if of == "logs" else TRANSACTIONS
        with self.engine.connect() as connection:
            found = {"project": [f"{i} · {name}" for i, name in connection.execute(
                select(PROJECTS.c.id, PROJECTS.c.name)
                .where(sqlalchemy.exists(select(table.c.id).where(table.c.project_id == PROJECTS.c.id)))
                .order_by(PROJECTS.c.id))]}
            for name in ("environment", "release"):
                column = table.c[name]
                found[name] = list(connection.execute(
                    select(column).where(column != "").group_by(column)
                    .order_by(sqlalchemy.func.max(table.c.id).desc()).limit(FACET_VALUES)
                ).scalars())
        return found


FACET_VALUES = 50  # environments and releases offered to filter by, the most recently seen
LOG_COLUMNS = (LOGS.c.id, LOGS.c.timestamp, LOGS.c.level, LOGS.c.body, LOGS.c.trace_id, LOGS.c.attributes)


def _log_lines(rows: Sequence[sqlalchemy.RowMapping]) -> list[dict[str, Any]]:
    # A line stored before non-finite numbers were refused may hold one: it reads as no time, as at ingest.
    return [{**row, "timestamp": seconds(row["timestamp"]) or 0.0} for row in rows]


def narrowed(table: sqlalchemy.Table, project_id: int | None, environment: str, release: str) -> sqlalchemy.ColumnElement[bool]:
    """Rows of `table` (transactions or log lines) of the project, environment and release given (None, "": any)."""
    condition: sqlalchemy.ColumnElement[bool] = sqlalchemy.true()
    if project_id is not None:
        condition = condition & (table.c.project_id == project_id)
    if environment:
        condition = condition & (table.c.environment == environment)
    if release:
        condition = condition & (table.c.release == release)
    return condition
