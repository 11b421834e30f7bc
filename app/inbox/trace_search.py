"""The /traces search: the triage search syntax (docs/search.md), read by its own parser
(app/inbox/search/grammar.py), where it applies to transactions:

    environment:production !release:[1.0, 1.1] project:shop transaction:/checkout* GET /api

`environment:`, `release:`, `transaction:` (the name) and `project:` (a project's name, in any case,
or its id) take lists, `!` and `*` wildcards as in the issue search; `has:environment`, `has:release`
and `has:transaction` (`environment:""`: none); free text is found in the name or the operation,
case-insensitively (`%` and `_` match themselves). A query of one bare word, which the issue search
reads as an issue id, short id or event id, is text here. Any other term is refused with a sentence
naming it (`SearchError`), as the issue search refuses what it cannot read.
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy import ColumnElement, func, select

from app.inbox.search import AssignedTerm, CountTerm, DateTerm, HasTerm, IsTerm, SearchError, TagTerm, Term, TextTerm, parse
from app.inbox.search.conditions import ESCAPE, LATEST, like_pattern
from app.inbox.tables import TRANSACTIONS
from app.projects.tables import PROJECTS

COLUMNS = {"environment": TRANSACTIONS.c.environment, "release": TRANSACTIONS.c.release,
           "transaction": TRANSACTIONS.c.name}
KNOWN = "environment:, release:, project:, transaction: and has:"


def transaction_condition(text: str) -> ColumnElement[bool]:
    """The transactions matching every term of `text`; `SearchError` for one that does not parse, or
    names what transactions do not have."""
    query = parse(text)
    if query.direct is not None:  # one bare word: text
        return _text(text.strip())
    return sqlalchemy.and_(sqlalchemy.true(), *(_term(term) for term in query.terms))


def _term(term: Term) -> ColumnElement[bool]:
    match term:
        case TextTerm(phrase=phrase):
            return _text(phrase)
        case TagTerm(key=key, values=values, negated=negated) if key in COLUMNS or key == "project":
            if key == "release" and LATEST in values:
                raise SearchError('"release:latest" is for issues: name the release (the release list offers the recent ones).')
            found = _project(values) if key == "project" else _values(COLUMNS[key], values)
            return ~found if negated else found
        case HasTerm(key=key, negated=negated) if key in COLUMNS:
            return COLUMNS[key] == "" if negated else COLUMNS[key] != ""
    raise SearchError(f"{_named(term)} is not a filter of transactions: use {KNOWN}, or put text with a colon in quotes.")


def _text(phrase: str) -> ColumnElement[bool]:
    pattern = f"%{like_pattern(phrase, wildcards=False)}%"
    return _like(TRANSACTIONS.c.name, pattern) | _like(TRANSACTIONS.c.op, pattern)


def _like(column: ColumnElement[str], pattern: str) -> ColumnElement[bool]:
    return func.lower(column).like(pattern.lower(), escape=ESCAPE)


def _values(column: ColumnElement[str], values: tuple[str, ...]) -> ColumnElement[bool]:
    """`column` exactly one of `values` (as sent, case and all), or like one with `*` (any case)."""
    exact = [value for value in values if "*" not in value]
    matches: list[ColumnElement[bool]] = [column.in_(exact)] if exact else []
    matches += [_like(column, like_pattern(value)) for value in values if "*" in value]
    return sqlalchemy.or_(sqlalchemy.false(), *matches)


def _project(values: tuple[str, ...]) -> ColumnElement[bool]:
    """Transactions of a project named one of `values` (in any case), or whose id one is."""
    named = [value.lower() for value in values if "*" not in value]
    ids = [int(value) for value in values if value.isascii() and value.isdigit() and len(value) <= 18]
    matches: list[ColumnElement[bool]] = [func.lower(PROJECTS.c.name).in_(named), PROJECTS.c.id.in_(ids)]
    matches += [_like(PROJECTS.c.name, like_pattern(value)) for value in values if "*" in value]
    return TRANSACTIONS.c.project_id.in_(select(PROJECTS.c.id).where(sqlalchemy.or_(*matches)))


def _named(term: Term) -> str:
    """The filter a term was written with, for a sentence."""
    match term:
        case TagTerm(key=key):
            return f'"{key}:"'
        case HasTerm(key=key):
            return f'"has:{key}"'
        case IsTerm():
            return '"is:"'
        case AssignedTerm():
            return '"assigned:"'
        case DateTerm():
            return '"firstSeen:", "lastSeen:" or "age:"'
        case CountTerm():
            return '"timesSeen:"'
    return f'"{term}"'
