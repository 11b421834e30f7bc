"""The one search engine of the issues list: the console's pages and `GET /api/inbox/issues` both ask
`IssueSearch`, so a query means the same everywhere.

A query of one issue id, short id or event id is a direct hit (`Found.direct`): that issue alone. If it
names none, it is searched as the text it is (`404`, `read-only` are words too), as Sentry does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy
from sqlalchemy import ColumnElement, func, select

from app.inbox import states
from app.inbox.reading import ISSUE_COLUMNS
from app.inbox.search.conditions import Context, condition
from app.inbox.search.grammar import parse
from app.inbox.search.terms import Query, SearchError, TextTerm
from app.inbox.short_ids import short_id
from app.inbox.tables import ISSUES, PROJECTS

SORTS: dict[str, tuple[ColumnElement[Any], ...]] = {
    "date": (ISSUES.c.last_seen.desc(), ISSUES.c.id.desc()),  # last seen first: the default
    "new": (ISSUES.c.first_seen.desc(), ISSUES.c.id.desc()),  # first seen first
    "freq": (ISSUES.c.event_count.desc(), ISSUES.c.id.desc()),  # most events first
}
COLUMNS = (*ISSUE_COLUMNS, ISSUES.c.assignee)
MAX_PAGE = 1000  # issues of one page
MAX_IDS = 100_000  # ids of one bulk action


@dataclass(frozen=True)
class Found:
    """A page of issues (ISSUE_COLUMNS, `assignee`, `short_id`, `project_name`), how many match in
    all, and whether the query named the issue directly."""

    issues: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    direct: bool = False


class IssueSearch:
    """Sentry's issue search syntax (docs/search.md) over the inbox's issues."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def search(self, text: str, *, viewer: str = "", sort: str = "date", project: int | None = None, limit: int = 25,
               offset: int = 0, now: float | None = None, status: str | None = None) -> Found:
        """A page of the issues matching `text`, in `sort`'s order. `viewer` is who `assigned:me` is;
        `status` ("open": unresolved or regressed) and `project` narrow every query, direct hits too.
        `SearchError` for a query that does not parse or an unknown sort."""
        query, order = parse(text), _order(sort)
        if not (0 < limit <= MAX_PAGE and offset >= 0):
            raise ValueError(f"A page holds 1 to {MAX_PAGE} issues, from an offset of at least 0.")
        with self.engine.connect() as connection:
            context = Context(connection, viewer, time.time() if now is None else now, project)
            scope = _scope(project, status)
            if query.direct is not None:
                hit = connection.execute(select(*COLUMNS).where(scope, condition(query, context)).limit(1)).mappings().all()
                if hit:
                    return Found(_shown(connection, hit[offset:offset + limit]), 1, direct=True)
                query = Query((TextTerm(text.strip()),))
            where = scope & condition(query, context)
            total = connection.execute(select(func.count()).select_from(ISSUES).where(where)).scalar_one()
            rows = connection.execute(select(*COLUMNS).where(where).order_by(*order).limit(limit).offset(offset)).mappings().all()
            return Found(_shown(connection, rows), int(total))

    def ids(self, text: str, *, viewer: str = "", project: int | None = None, limit: int = 10_000,
            now: float | None = None, status: str | None = None) -> list[int]:
        """The ids of up to `limit` issues matching `text`, last seen first (for bulk actions on
        every match); as `search`."""
        query = parse(text)
        if not 0 < limit <= MAX_IDS:
            raise ValueError(f"A bulk action takes 1 to {MAX_IDS:,} issues.")
        with self.engine.connect() as connection:
            context = Context(connection, viewer, time.time() if now is None else now, project)
            scope = _scope(project, status)
            if query.direct is not None:
                hit = connection.execute(select(ISSUES.c.id).where(scope, condition(query, context)).limit(1)).scalars().all()
                if hit:
                    return list(hit)
                query = Query((TextTerm(text.strip()),))
            return list(connection.execute(
                select(ISSUES.c.id).where(scope, condition(query, context)).order_by(*SORTS["date"]).limit(limit)
            ).scalars())

    def issue(self, issue_id: int) -> dict[str, Any] | None:
        """One issue, as `search` lists it."""
        with self.engine.connect() as connection:
            found = connection.execute(select(*COLUMNS).where(ISSUES.c.id == issue_id)).mappings().all()
            return _shown(connection, found)[0] if found else None


def _order(sort: str) -> tuple[ColumnElement[Any], ...]:
    if sort not in SORTS:
        raise SearchError(f'Unknown sort "{sort[:40]}": use date, new or freq.')
    return SORTS[sort]


def _scope(project: int | None, status: str | None) -> ColumnElement[bool]:
    scope: ColumnElement[bool] = sqlalchemy.true() if project is None else ISSUES.c.project_id == project
    if status == "open":
        return scope & ISSUES.c.status.in_(states.OPEN)
    return scope & (ISSUES.c.status == status) if status else scope


def _shown(connection: sqlalchemy.Connection, rows: Any) -> list[dict[str, Any]]:
    """The rows as dicts, each with its short id and its project's name."""
    wanted = sorted({row["project_id"] for row in rows})
    names: dict[int, str] = {}
    if wanted:
        names = dict(connection.execute(select(PROJECTS.c.id, PROJECTS.c.name).where(PROJECTS.c.id.in_(wanted))).tuples().all())
    return [{**row, "short_id": short_id(names.get(row["project_id"], ""), row["id"]),
             "project_name": names.get(row["project_id"], "")} for row in rows]
