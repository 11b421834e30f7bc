"""The form each term of a search takes (conditions.py), chosen from cheap counts of the indexes.

SQLite plans without statistics (nobody runs ANALYZE on an app's database), so a search tells it
what the indexes know. Each tag term's rows are counted in the tag index, up to ESTIMATE_CAP (an
index-only read of at most that many entries; a wildcard's are not, as that reads every value of its
key: it counts as many), and:
- the positive term with the fewest rows is LISTED: the list drives the search (HASHED on PostgreSQL
  if it has SMALL rows or more);
- any other term with fewer than SMALL rows is LISTED too (a short list is cheap to build and check);
- every other positive term, and a `has:` with many rows (one per value: `has:user.email` reads a
  row per user), is PROBED: one index probe per issue the other terms leave;
- every other negated term is PROBED when a short list drives, else LISTED on SQLite (one list of
  the issues to leave out reads faster than a probe for every issue).
A date range of at least BROAD_DATES issues is SCANNED on SQLite: one pass over the table reads
faster than a lookup per issue in the index's order. PostgreSQL has statistics, but takes a tag's key
and value as independent: it is told the same forms, a broad driving list HASHED (conditions.py);
its dates are left to its own plans.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, func, select

from app.inbox.search.conditions import COMPARE, HASHED, LISTED, PROBED, SCANNED, Context, moment, tag_match
from app.inbox.search.terms import DateTerm, HasTerm, Query, TagTerm, Term
from app.inbox.tables import ISSUE_TAGS, ISSUES

ESTIMATE_CAP = 20_000
SMALL = 5_000
BROAD_DATES = 10_000


def forms(query: Query, context: Context) -> dict[Term, str]:
    """The form of each tag and date term of `query` (the others have one form)."""
    tagged = [term for term in query.terms if isinstance(term, TagTerm | HasTerm)]
    rows = {term: ESTIMATE_CAP if isinstance(term, TagTerm) and term.wildcard  # counting would read every value
            else _counted(ISSUE_TAGS.c.issue_id, tag_match(term, context), ESTIMATE_CAP, context) for term in tagged}
    positive = sorted((term for term in tagged if not term.negated), key=lambda term: rows[term])
    driver = positive[0] if positive and not (isinstance(positive[0], HasTerm) and rows[positive[0]] >= SMALL) else None
    short_driver = driver is not None and rows[driver] < SMALL
    chosen: dict[Term, str] = {}
    for term in tagged:
        if term == driver or rows[term] < SMALL:
            chosen[term] = HASHED if rows[term] >= SMALL and context.connection.dialect.name != "sqlite" else LISTED
        elif not term.negated or short_driver or isinstance(term, HasTerm):
            chosen[term] = PROBED
        else:
            chosen[term] = LISTED
    if context.connection.dialect.name == "sqlite":
        for dated in (term for term in query.terms if isinstance(term, DateTerm)):
            within = COMPARE[dated.op](ISSUES.c[dated.field], moment(dated, context))
            chosen[dated] = SCANNED if _counted(ISSUES.c.id, within, BROAD_DATES, context) >= BROAD_DATES else LISTED
    return chosen


def _counted(column: ColumnElement[int], where: ColumnElement[bool], cap: int, context: Context) -> int:
    """How many rows match `where`, counted up to `cap` (from an index alone, when it has `column`)."""
    capped = select(column).where(where).limit(cap).subquery()
    return int(context.connection.execute(select(func.count()).select_from(capped)).scalar_one())

