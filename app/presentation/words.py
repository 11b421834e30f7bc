"""A count and the noun that agrees with it, for the strings pages show ("1 event", "2 events").
Counts that are Vars (known only in the browser): `count_of` in app/components/words.py."""

from __future__ import annotations


def noun(count: int, singular: str, many: str = "") -> str:
    """The noun for `count` alone: `singular` for exactly 1, else `many` (default: `singular` + "s")."""
    return singular if count == 1 else many or singular + "s"


def plural(count: int, singular: str, many: str = "") -> str:
    """The count with thousands separators and its noun: "1 event", "0 events", "1,200 events"."""
    return f"{count:,} {noun(count, singular, many)}"
