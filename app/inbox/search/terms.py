"""The typed terms of an issue search (grammar.py parses them, conditions.py matches them). All of a
query's terms must match an issue (AND), as in Sentry; a list's values are alternatives (OR).

    ValueError
      └── SearchError   a query that does not parse: one sentence naming the term
"""

from __future__ import annotations

from dataclasses import dataclass


class SearchError(ValueError):
    """A query that does not parse, or is over a bound; the message is one sentence naming the term."""


@dataclass(frozen=True)
class TagTerm:
    """`key:value`, `key:[a, b]`, `!key:value`: issues with an event of that tag value (negated:
    with none). `level`, `environment` and `release` are tags too; `release:latest` is the newest."""

    key: str
    values: tuple[str, ...]
    negated: bool = False
    wildcard: bool = False  # some value holds `*`: any run of characters, matched case-insensitively


@dataclass(frozen=True)
class HasTerm:
    """`has:key` (negated: `!has:key`, or `key:""`): issues with an event of that tag."""

    key: str
    negated: bool = False


@dataclass(frozen=True)
class IsTerm:
    """`is:unresolved` (and regressed, a kind of unresolved, as in Sentry), resolved, ignored,
    regressed, assigned or unassigned."""

    value: str
    negated: bool = False


@dataclass(frozen=True)
class AssignedTerm:
    """`assigned:me`, `assigned:alice`, `assigned:none`, `assigned:[me, none]`."""

    who: tuple[str, ...]
    negated: bool = False


@dataclass(frozen=True)
class DateTerm:
    """`first_seen` or `last_seen` compared (`op`: >, >=, < or <=) with a time: `when` (epoch
    seconds), or `ago` seconds before the search's `now`."""

    field: str
    op: str
    when: float | None = None
    ago: float | None = None


@dataclass(frozen=True)
class CountTerm:
    """`timesSeen:>10`: the issue's event count compared (`op`: >, >=, <, <= or =) with `n`."""

    op: str
    n: int


@dataclass(frozen=True)
class IdTerm:
    """A query of one issue id: that issue."""

    issue_id: int


@dataclass(frozen=True)
class ShortIdTerm:
    """A query of one short id (`LOOKOUT-1Z`): that issue, if its project's short name is `project`."""

    project: str
    number: int


@dataclass(frozen=True)
class EventIdTerm:
    """A query of one event id (32 hex digits): the issue of that event."""

    hex: str


@dataclass(frozen=True)
class TextTerm:
    """Free text: issues whose title or culprit hold the phrase, case-insensitively."""

    phrase: str


Term = TagTerm | HasTerm | IsTerm | AssignedTerm | DateTerm | CountTerm | IdTerm | ShortIdTerm | EventIdTerm | TextTerm
Direct = IdTerm | ShortIdTerm | EventIdTerm


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...] = ()

    @property
    def direct(self) -> Direct | None:
        """The issue the query names directly (a query of one id, short id or event id), if it does."""
        if len(self.terms) == 1 and isinstance(self.terms[0], IdTerm | ShortIdTerm | EventIdTerm):
            return self.terms[0]
        return None
