"""Sentry's issue search syntax (docs/search.md): `parse` a query into typed terms (grammar.py,
terms.py), match them as SQL (conditions.py), and `IssueSearch` runs them for the console and the API."""

from app.inbox.search.engine import Found, IssueSearch
from app.inbox.search.grammar import parse
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

__all__ = [
    "AssignedTerm", "CountTerm", "DateTerm", "EventIdTerm", "Found", "HasTerm", "IdTerm", "IsTerm", "IssueSearch",
    "Query", "SearchError", "ShortIdTerm", "TagTerm", "Term", "TextTerm", "parse",
]
