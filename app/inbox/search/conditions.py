"""A typed query (terms.py) as one SQLAlchemy condition on the issues table, every user value a bound
parameter.

Tags are matched through the per-issue tag index, in one of two forms (`Context.forms`, plan.py):
- LISTED: `id IN (SELECT issue_id FROM inbox_issue_tag WHERE key = ? AND value = ?)`, the list read
  once from the index on (key, value, issue_id); negated `NOT IN` (on SQLite);
- HASHED, on PostgreSQL: LISTED, kept out of the query's joins (`(id IN (...)) IS TRUE`), so that the
  issues are read once and each looked up in the list's hash: PostgreSQL's planner, taking key and
  value as independent, expects a few hundred rows of `browser.name:Chrome` where there are tens of
  thousands, and would look each listed issue up by its id;
- PROBED: `EXISTS (... WHERE issue_id = inbox_issue.id AND key = ? ...)`, a probe of the unique
  (issue_id, key, value) index per issue the other terms leave; negated `NOT EXISTS` (and always on
  PostgreSQL, which plans `NOT IN` over a large set badly).
A date is compared on its column (its index), or, SCANNED, on `column + 0`, which no index has: a
range of most issues reads faster in one pass over the table than through the index.
A term matches per issue, not per event: `browser.name:Chrome os.name:Linux` finds an issue with a
Chrome event and a Linux event.
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy
from sqlalchemy import ColumnElement, exists, func, select

from app.inbox import states
from app.inbox.search.terms import (
    AssignedTerm,
    CountTerm,
    DateTerm,
    EventIdTerm,
    HasTerm,
    IdTerm,
    IsTerm,
    Query,
    SearchError,
    ShortIdTerm,
    TagTerm,
    Term,
    TextTerm,
)
from app.inbox.short_ids import short_name
from app.inbox.tables import EVENTS, ISSUE_TAGS, ISSUES
from app.projects.tables import PROJECTS

COMPARE: dict[str, Callable[[Any, Any], ColumnElement[bool]]] = {
    ">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le, "=": operator.eq,
}
IS: dict[str, ColumnElement[bool]] = {
    "unresolved": ISSUES.c.status.in_(states.OPEN),
    "resolved": ISSUES.c.status == states.RESOLVED,
    "ignored": ISSUES.c.status == states.IGNORED,
    "regressed": ISSUES.c.status == states.REGRESSED,
    "assigned": ISSUES.c.assignee != "",
    "unassigned": ISSUES.c.assignee == "",
}
LATEST = "latest"  # `release:latest`
# The newest release is an aggregate over every release row of the tag index (a few hundred ms at
# 100k issues, no index has its first seen): looked up at most once a minute per database and project.
LATEST_TTL_S = 60.0
MAX_PROJECTS = 10_000  # projects read to match a short id's name
ESCAPE = "/"
_latest: dict[tuple[str, int | None], tuple[float, str | None]] = {}  # (database, project) → (looked up at, release)
# The forms above; a term has LISTED (a date: its index) unless told.
LISTED, HASHED, PROBED, SCANNED = "listed", "hashed", "probed", "scanned"


@dataclass
class Context:
    """What matching needs beyond the query: the database (for lookups), who searches, when, in which
    project, the form of each term (above), or PROBED for every tag term (`probe_all`)."""

    connection: sqlalchemy.Connection
    viewer: str
    now: float
    project: int | None
    forms: dict[Term, str] = field(default_factory=dict)
    probe_all: bool = False

    def latest_release(self) -> str | None:
        """The newest release: the one whose first event came last (in the project, if one is searched)."""
        key = (str(self.connection.engine.url), self.project)
        found = _latest.get(key)
        if found is None or time.monotonic() - found[0] > LATEST_TTL_S:
            first = func.min(ISSUE_TAGS.c.first_seen)
            newest = select(ISSUE_TAGS.c.value).where(ISSUE_TAGS.c.key == "release")
            if self.project is not None:
                newest = newest.where(ISSUE_TAGS.c.issue_id.in_(select(ISSUES.c.id).where(ISSUES.c.project_id == self.project)))
            release = self.connection.execute(
                newest.group_by(ISSUE_TAGS.c.value).order_by(first.desc(), ISSUE_TAGS.c.value.desc()).limit(1)).scalar()
            if len(_latest) > 1000:
                _latest.clear()
            found = _latest[key] = (time.monotonic(), release)
        return found[1]


def condition(query: Query, context: Context) -> ColumnElement[bool]:
    """Issues matching every term of `query`."""
    return sqlalchemy.and_(sqlalchemy.true(), *(term_condition(term, context) for term in query.terms))


def term_condition(term: Term, context: Context) -> ColumnElement[bool]:
    match term:
        case TagTerm(negated=negated) | HasTerm(negated=negated):
            return _tagged(tag_match(term, context), negated, _form(term, context), context)
        case IsTerm(value=value, negated=negated):
            return ~IS[value] if negated else IS[value]
        case AssignedTerm():
            return _assigned(term, context)
        case DateTerm(field=name, op=op):
            column = ISSUES.c[name] + 0 if context.forms.get(term) == SCANNED else ISSUES.c[name]
            return COMPARE[op](column, moment(term, context))
        case CountTerm(op=op, n=n):
            return COMPARE[op](ISSUES.c.event_count, n)
        case IdTerm(issue_id=issue_id):
            return ISSUES.c.id == issue_id
        case ShortIdTerm(project=project, number=number):
            projects = context.connection.execute(select(PROJECTS.c.id, PROJECTS.c.name).limit(MAX_PROJECTS)).all()
            named = [project_id for project_id, name in projects if short_name(name) == project]
            return (ISSUES.c.id == number) & ISSUES.c.project_id.in_(named)
        case EventIdTerm(hex=hex_id):
            # Each project's part of the (project_id, event_id) index, rather than every event.
            return ISSUES.c.id.in_(select(EVENTS.c.issue_id).where(
                EVENTS.c.project_id.in_(select(PROJECTS.c.id)), EVENTS.c.event_id == hex_id))
        case TextTerm(phrase=phrase):
            pattern = f"%{like_pattern(phrase, wildcards=False)}%"
            return _like(ISSUES.c.title, pattern, context) | _like(ISSUES.c.culprit, pattern, context)
    raise AssertionError(f"no condition for {term!r}")


def moment(term: DateTerm, context: Context) -> float:
    return term.when if term.when is not None else context.now - (term.ago or 0.0)


def tag_match(term: TagTerm | HasTerm, context: Context) -> ColumnElement[bool]:
    """The tag rows of the term (negated or not): its key, with one of its values for a TagTerm."""
    if isinstance(term, HasTerm):
        return ISSUE_TAGS.c.key == term.key
    values = list(term.values)
    if term.key == "release" and LATEST in values:
        latest = context.latest_release()
        values = [value for value in values if value != LATEST] + ([latest] if latest is not None else [])
    exact = [value for value in values if "*" not in value]
    matches = [ISSUE_TAGS.c.value == exact[0] if len(exact) == 1 else ISSUE_TAGS.c.value.in_(exact)] if exact else []
    matches += [_like(ISSUE_TAGS.c.value, like_pattern(value), context) for value in values if "*" in value]
    return (ISSUE_TAGS.c.key == term.key) & sqlalchemy.or_(sqlalchemy.false(), *matches)


def _form(term: Term, context: Context) -> str:
    return PROBED if context.probe_all else context.forms.get(term, LISTED)


def _tagged(match: ColumnElement[bool], negated: bool, form: str, context: Context) -> ColumnElement[bool]:
    """Issues with a tag row matching `match` (negated: with none), in `form`."""
    postgresql = context.connection.dialect.name != "sqlite"
    if form == PROBED or (negated and postgresql):
        found = exists(select(ISSUE_TAGS.c.id).where(ISSUE_TAGS.c.issue_id == ISSUES.c.id, match))
        if negated:
            return ~found
        # In a window, PostgreSQL would rather hash every issue of the tag than probe a few hundred.
        return found.is_(sqlalchemy.true()) if postgresql and context.probe_all else found
    listed = select(ISSUE_TAGS.c.issue_id).where(match)
    if negated:
        return ISSUES.c.id.not_in(listed)
    if form == HASHED and postgresql:
        return ISSUES.c.id.in_(listed).is_(sqlalchemy.true())
    return ISSUES.c.id.in_(listed)


def _like(column: ColumnElement[str], pattern: str, context: Context) -> ColumnElement[bool]:
    """Case-insensitive LIKE: SQLite's own LIKE is (for ASCII, as its lower() is), and reads 5 times
    faster than lower(column) LIKE; on PostgreSQL, lower(column) LIKE reads twice as fast as ILIKE."""
    if context.connection.dialect.name == "sqlite":
        return column.like(pattern, escape=ESCAPE)
    return func.lower(column).like(pattern.lower(), escape=ESCAPE)


def _assigned(term: AssignedTerm, context: Context) -> ColumnElement[bool]:
    names = []
    for who in term.who:
        if who == "me" and not context.viewer:
            raise SearchError('"assigned:me" needs a signed-in user: name the user instead.')
        names.append(context.viewer if who == "me" else "" if who == "none" else who)
    matched = ISSUES.c.assignee.in_(names)
    return ~matched if term.negated else matched


def like_pattern(value: str, wildcards: bool = True) -> str:
    """`value` as a LIKE pattern: its `*` as `%` (if `wildcards`); its own `%`, `_` and the escape
    character match themselves."""
    escaped = value.replace(ESCAPE, ESCAPE * 2).replace("%", ESCAPE + "%").replace("_", ESCAPE + "_")
    return escaped.replace("*", "%") if wildcards else escaped
