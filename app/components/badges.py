"""Badges for an issue's level and status, each word in a colour of its own (one mapping for both,
so a page never picks colours itself); an unknown word is gray. The word stays the badge's text."""

from __future__ import annotations

import reflex as rx

# Radix colour scales (https://www.radix-ui.com/colors).
COLORS = {
    "fatal": "crimson", "error": "red", "warning": "amber", "info": "blue", "debug": "gray",
    "unresolved": "orange", "regressed": "purple", "resolved": "green", "ignored": "gray",
}


def color_of(word: rx.Var[str]) -> rx.Var:
    """The colour scheme `COLORS` gives the word, gray for any other."""
    return rx.match(word, *COLORS.items(), "gray")


def level_badge(level: rx.Var[str], **props: str) -> rx.Component:
    """An event's or issue's level (fatal, error, warning, info, debug) as a coloured badge."""
    return rx.badge(level, color_scheme=color_of(level), **props)


def status_badge(status: rx.Var[str], **props: str) -> rx.Component:
    """An issue's status (unresolved, regressed, resolved, ignored) as a coloured badge."""
    return rx.badge(status, color_scheme=color_of(status), **props)
