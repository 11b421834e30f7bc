"""A count and the noun that agrees with it."""

from __future__ import annotations

from app.presentation.words import noun, plural


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert [plural(n, "event") for n in (0, 1, 2)] == ["0 events", "1 event", "2 events"]
    assert plural(-1, "issue") == "-1 issues" and plural(1_200, "issue") == "1,200 issues"
    assert plural(1, "older breadcrumb") == "1 older breadcrumb"


def test_an_irregular_plural_is_named() -> None:
    assert plural(2, "match", "matches") == "2 matches" and plural(1, "match", "matches") == "1 match"
    assert noun(3, "entry", "entries") == "entries"


def test_the_noun_alone() -> None:
    assert [noun(n, "event") for n in (0, 1, 10)] == ["events", "event", "events"]
