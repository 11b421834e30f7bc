"""A count known only in the browser (a Var) and the noun that agrees with it, as text children
("1 event", "3 events"). Counts known in Python: app/presentation/words.py."""

from __future__ import annotations

import reflex as rx
from reflex.vars import NumberVar, StringVar


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
