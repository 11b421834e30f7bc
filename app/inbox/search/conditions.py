"""A typed query (terms.py) as one SQLAlchemy condition on the issues table, every user value a bound
parameter.

Tags are matched through the per-issue tag index: `key:value` is `id IN (SELECT issue_id FROM
inbox_issue_tag WHERE key = ? AND value = ?)`, which the index on (key, value, issue_id) answers; a
negated one is `NOT EXISTS` of the issue's row, which the unique (issue_id, key, value) index answers
(PostgreSQL plans `NOT IN` over a large set badly). A term matches per issue, not per event:
`browser.name:Chrome os.name:Linux` finds an issue with a Chrome event and a Linux event.
"""

from __future__ import annotations

import operator
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
from app.inbox.tables import EVENTS, ISSUE_TAGS, ISSUES, PROJECTS

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
MAX_PROJECTS = 10_000  # projects read to match a short id's name
ESCAPE = "/"


@dataclass
class Context:
    """What matching needs beyond the query: the database (for lookups), who searches, when, in which project."""

    connection: sqlalchemy.Connection
    viewer: str
    now: float
    project: int | None
    _latest: list[str | None] = field(default_factory=list)  # release:latest, once looked up

    def latest_release(self) -> str | None:
        """The newest release: the one whose first event came last (in the project, if one is searched)."""
        if not self._latest:
            first = func.min(ISSUE_TAGS.c.first_seen)
            newest = select(ISSUE_TAGS.c.value).where(ISSUE_TAGS.c.key == "release")
            if self.project is not None:
                newest = newest.where(ISSUE_TAGS.c.issue_id.in_(select(ISSUES.c.id).where(ISSUES.c.project_id == self.project)))
            self._latest.append(self.connection.execute(
                newest.group_by(ISSUE_TAGS.c.value).order_by(first.desc(), ISSUE_TAGS.c.value.desc()).limit(1)).scalar())
        return self._latest[0]


def condition(query: Query, context: Context) -> ColumnElement[bool]:
    """Issues matching every term of `query`."""
    return sqlalchemy.and_(sqlalchemy.true(), *(term_condition(term, context) for term in query.terms))


def term_condition(term: Term, context: Context) -> ColumnElement[bool]:
    match term:
        case TagTerm():
            return _tag(term, context)
        case HasTerm(key=key, negated=negated):
            return _tagged(ISSUE_TAGS.c.key == key, negated)
        case IsTerm(value=value, negated=negated):
            return ~IS[value] if negated else IS[value]
        case AssignedTerm():
            return _assigned(term, context)
        case DateTerm(field=name, op=op, when=when, ago=ago):
            return COMPARE[op](ISSUES.c[name], when if when is not None else context.now - (ago or 0.0))
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
            wanted = phrase.lower()
            return (func.lower(ISSUES.c.title).contains(wanted, autoescape=True)
                    | func.lower(ISSUES.c.culprit).contains(wanted, autoescape=True))
    raise AssertionError(f"no condition for {term!r}")


def _tag(term: TagTerm, context: Context) -> ColumnElement[bool]:
    values = list(term.values)
    if term.key == "release" and LATEST in values:
        latest = context.latest_release()
        values = [value for value in values if value != LATEST] + ([latest] if latest is not None else [])
    exact = [value for value in values if "*" not in value]
    matches = [ISSUE_TAGS.c.value == exact[0] if len(exact) == 1 else ISSUE_TAGS.c.value.in_(exact)] if exact else []
    matches += [func.lower(ISSUE_TAGS.c.value).like(like_pattern(value.lower()), escape=ESCAPE)
                for value in values if "*" in value]
    return _tagged((ISSUE_TAGS.c.key == term.key) & sqlalchemy.or_(sqlalchemy.false(), *matches), term.negated)


def _tagged(match: ColumnElement[bool], negated: bool) -> ColumnElement[bool]:
    """Issues with a tag row matching `match` (negated: with none)."""
    if negated:
        return ~exists(select(ISSUE_TAGS.c.id).where(ISSUE_TAGS.c.issue_id == ISSUES.c.id, match))
    return ISSUES.c.id.in_(select(ISSUE_TAGS.c.issue_id).where(match))


def _assigned(term: AssignedTerm, context: Context) -> ColumnElement[bool]:
    names = []
    for who in term.who:
        if who == "me" and not context.viewer:
            raise SearchError('"assigned:me" needs a signed-in user: name the user instead.')
        names.append(context.viewer if who == "me" else "" if who == "none" else who)
    matched = ISSUES.c.assignee.in_(names)
    return ~matched if term.negated else matched


def like_pattern(value: str) -> str:
    """`value`'s `*` as LIKE's `%`; its own `%`, `_` and the escape character match themselves."""
    escaped = value.replace(ESCAPE, ESCAPE * 2).replace("%", ESCAPE + "%").replace("_", ESCAPE + "_")
    return escaped.replace("*", "%")
