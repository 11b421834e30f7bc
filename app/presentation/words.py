"""A count and the noun that agrees with it, for what pages show ("1 event", "2 events"): counts
known in Python (`plural`, `noun`) and counts known only in the browser, Vars (`count_of`, `noun_of`)."""

from __future__ import annotations

import reflex as rx
from reflex.vars import NumberVar, StringVar


def noun(count: int, singular: str, many: str = "") -> str:
    """The noun for `count` alone: `singular` for exactly 1, else `many` (default: `singular` + "s")."""
    return singular if count == 1 else many or singular + "s"


def plural(count: int, singular: str, many: str = "") -> str:
    """The count with thousands separators and its noun: "1 event", "0 events", "1,200 events"."""
    return f"{count:,} {noun(count, singular, many)}"


def noun_of(count: rx.Var, singular: str, many: str = "") -> rx.Var:
    """`singular` when `count` is 1, else `many` (default: `singular` + "s"). A count the state
    already formatted as text ("1,200") is compared with "1", a number with 1, a Var of unknown
    type with both."""
    if isinstance(count, NumberVar):
        one = count == 1
    elif isinstance(count, StringVar):
        one = count == "1"
    else:
        one = (count == 1) | (count == "1")
    return rx.cond(one, singular, many or singular + "s")


def count_of(count: rx.Var, singular: str, many: str = "") -> rx.Component:
    """The count, a space and its noun, as one text fragment (to sit inside an `rx.text`)."""
    return rx.fragment(count, " ", noun_of(count, singular, many))
