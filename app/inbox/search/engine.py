"""The one search engine of the issues list: the console's pages and `GET /api/inbox/issues` both ask
`IssueSearch`, so a query means the same everywhere.

A query of one issue id, short id or event id is a direct hit (`Found.direct`): that issue alone. If it
names none, it is searched as the text it is (`404`, `read-only` are words too), as Sentry does.

Matches are counted up to MAX_HITS, as Sentry counts them (its `X-Max-Hits`): beyond, `Found.total`
is MAX_HITS and `Found.capped` says there are more. Up to MAX_HITS, one statement reads their ids and
sort keys and gives the count and the page's ids. Beyond, the page is first looked for among the issues first in the
sort's order (its index: last seen, first seen), a bounded window in which each issue is checked as
it comes (tag terms as probes of its own tag rows: conditions.py); if the window holds no full page
(the matches are old ones, or sorted by events), the matches are sorted by the database.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import sqlalchemy
from sqlalchemy import ColumnElement, RowMapping, func, select

from app.inbox import states
from app.inbox.search.conditions import Context, condition
from app.inbox.search.grammar import parse
from app.inbox.search.plan import forms
from app.inbox.search.terms import DateTerm, Query, SearchError, TextTerm
from app.inbox.short_ids import short_id
from app.inbox.tables import ISSUE_COLUMNS, ISSUES
from app.projects.tables import PROJECTS

KEYS = {"date": ISSUES.c.last_seen, "new": ISSUES.c.first_seen, "freq": ISSUES.c.event_count}  # each sort's column
SORTS: dict[str, tuple[ColumnElement[Any], ...]] = {  # then the newest issue first
    "date": (ISSUES.c.last_seen.desc(), ISSUES.c.id.desc()),  # last seen first: the default
    "new": (ISSUES.c.first_seen.desc(), ISSUES.c.id.desc()),  # first seen first
    "freq": (ISSUES.c.event_count.desc(), ISSUES.c.id.desc()),  # most events first
}
# The same orders on expressions no index has: the database collects the matches, then sorts them.
SORTED_AFTER = {sort: ((column + 0).desc(), (ISSUES.c.id + 0).desc()) for sort, column in KEYS.items()}
MAX_HITS = 10_000
# The window: enough issues to hold the page's end three times over, were MAX_HITS matches spread
# evenly over all issues (at least MIN_WINDOW; beyond WINDOW, the database sorts the matches instead).
WINDOW, MIN_WINDOW = 20_000, 500
COLUMNS = (*ISSUE_COLUMNS, ISSUES.c.assignee)
MAX_PAGE = 1000  # issues of one page
MAX_IDS = 100_000  # ids of one bulk action


@dataclass(frozen=True)
class Found:
    """A page of issues (ISSUE_COLUMNS, `assignee`, `short_id`, `project_name`), how many match in all
    (at most MAX_HITS: `capped` when more do), and whether the query named the issue directly."""

    issues: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    direct: bool = False
    capped: bool = False


class IssueSearch:
    """Sentry's issue search syntax (docs/search.md) over the inbox's issues."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def search(self, text: str, *, viewer: str = "", sort: str = "date", project: int | None = None, limit: int = 25,
               offset: int = 0, now: float | None = None, status: str | None = None) -> Found:
        """A page of the issues matching `text`, in `sort`'s order. `viewer` is who `assigned:me` is;
        `status` ("open": unresolved or regressed) and `project` narrow every query, direct hits too.
        `SearchError` for a query that does not parse or an unknown sort."""
        query = parse(text)
        if sort not in SORTS:
            raise SearchError(f'Unknown sort "{sort[:40]}": use date, new or freq.')
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
            context.forms = forms(query, context)
            matched = select(ISSUES.c.id, KEYS[sort].label("key")).where(scope, condition(query, context)).limit(MAX_HITS + 1)
            ids, total = _ranked(connection, matched.subquery(), limit, offset)
            if total <= MAX_HITS:
                return Found(_shown(connection, _by_id(connection, ids)), total)
            return Found(_shown(connection, _page(query, context, scope, sort, limit, offset)), MAX_HITS, capped=True)

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
            context.forms = forms(query, context)
            return list(connection.execute(
                select(ISSUES.c.id).where(scope, condition(query, context)).order_by(*SORTED_AFTER["date"]).limit(limit)
            ).scalars())

    def issue(self, issue_id: int) -> dict[str, Any] | None:
        """One issue, as `search` lists it."""
        with self.engine.connect() as connection:
            return next(iter(_shown(connection, _by_id(connection, [issue_id]))), None)


def _page(query: Query, context: Context, scope: ColumnElement[bool], sort: str, limit: int,
          offset: int) -> Sequence[RowMapping]:
    """The page of over MAX_HITS matches: from the window if it holds the whole page, else from all
    of them. The window is of the issues in scope and in the query's dates, on their indexes."""
    connection = context.connection
    size = window_size(offset + limit, connection.execute(select(func.max(ISSUES.c.id))).scalar() or 0)
    if sort != "freq" and size <= WINDOW:
        dated = Query(tuple(term for term in query.terms if isinstance(term, DateTerm)))
        in_window = select(ISSUES.c.id).where(scope, condition(dated, replace(context, forms={})))
        rows = connection.execute(
            select(*COLUMNS).where(ISSUES.c.id.in_(in_window.order_by(*SORTS[sort]).limit(size)),
                                   condition(query, replace(context, probe_all=True)))
            .order_by(*SORTED_AFTER[sort]).limit(limit).offset(offset)
        ).mappings().all()
        if len(rows) == limit:
            return rows
    ranked = select(ISSUES.c.id).where(scope, condition(query, context)).order_by(*SORTED_AFTER[sort]).limit(limit).offset(offset)
    return connection.execute(select(*COLUMNS).where(ISSUES.c.id.in_(ranked)).order_by(*SORTS[sort])).mappings().all()


def _ranked(connection: sqlalchemy.Connection, matched: sqlalchemy.Subquery, limit: int, offset: int) -> tuple[list[int], int]:
    """The page's ids of the (up to MAX_HITS + 1) `matched` issues, and how many matched: one read of
    the matches, sorted and counted by the database (no row of them made in Python)."""
    page = connection.execute(
        select(matched.c.id, func.count().over()).order_by(matched.c.key.desc(), matched.c.id.desc()).limit(limit).offset(offset)
    ).all()
    if page:
        return [row[0] for row in page], int(page[0][1])
    return [], int(connection.execute(select(func.count()).select_from(matched)).scalar_one())  # a page past the end


def window_size(end: int, issues: int) -> int:
    """The window for a page ending at `end` among about `issues` issues (the largest id)."""
    return max(MIN_WINDOW, 3 * end * issues // MAX_HITS)


def _by_id(connection: sqlalchemy.Connection, ids: list[int]) -> list[RowMapping]:
    """The issues of `ids`, in that order (those that exist)."""
    if not ids:
        return []
    rows = {row["id"]: row for row in connection.execute(select(*COLUMNS).where(ISSUES.c.id.in_(ids))).mappings()}
    return [rows[issue_id] for issue_id in ids if issue_id in rows]


def _scope(project: int | None, status: str | None) -> ColumnElement[bool]:
    scope: ColumnElement[bool] = sqlalchemy.true() if project is None else ISSUES.c.project_id == project
    if status == "open":
        return scope & ISSUES.c.status.in_(states.OPEN)
    return scope & (ISSUES.c.status == status) if status else scope


def _shown(connection: sqlalchemy.Connection, rows: Sequence[RowMapping]) -> list[dict[str, Any]]:
    """The rows as dicts, each with its short id and its project's name."""
    wanted = sorted({row["project_id"] for row in rows})
    names: dict[int, str] = {}
    if wanted:
        names = dict(connection.execute(select(PROJECTS.c.id, PROJECTS.c.name).where(PROJECTS.c.id.in_(wanted))).tuples().all())
    return [{**row, "short_id": short_id(names.get(row["project_id"], ""), row["id"]),
             "project_name": names.get(row["project_id"], "")} for row in rows]
