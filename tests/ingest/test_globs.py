"""Globs as Relay's filters match them: `*`, `?`, any case, and no backtracking whatever the glob."""

from __future__ import annotations

import pytest

from app.ingest.globs import MAX_TEXT, Glob, any_matches, compiled


@pytest.mark.parametrize(("pattern", "text"), [
    ("*healthcheck*", "a_HEALTHCHECK_b"), ("*/health", "/health"), ("*/health", "a/HEALTH"),
    ("TypeError: *", "TypeError: Failed to fetch"), ("1.?.*", "1.2.3-beta"), ("exact", "EXACT"),
    ("*", ""), ("a*b*c", "abc"), ("a*b*c", "a--b--b--c"), ("*x*", "line one\nx\n"), ("??", "ab"),
    ("a.b[1]+(c)", "a.b[1]+(c)"),  # regex characters are themselves
])
def test_a_glob_matches(pattern: str, text: str) -> None:
    assert Glob(pattern).matches(text)


@pytest.mark.parametrize(("pattern", "text"), [
    ("*/health", "/health/"), ("*/health", "/healthz"), ("*healthcheck*", "health"), ("exact", "exactly"),
    ("a*b*c", "acb"), ("a*bc*bc", "abc"), ("??", "abc"), ("1.?.*", "1.22.3"), ("a.b", "axb"),
])
def test_a_glob_does_not_match(pattern: str, text: str) -> None:
    assert not Glob(pattern).matches(text)


def test_a_hostile_glob_on_a_long_text_is_answered_without_backtracking() -> None:
    # With a backtracking translation (fnmatch's `.*` per star), this takes longer than the suite.
    hostile = Glob("*a" * 40 + "*b")
    assert not hostile.matches("a" * 100_000)
    assert Glob("*b").matches("a" * (MAX_TEXT - 1) + "b") and not Glob("*b").matches("a" * MAX_TEXT + "b")


def test_a_list_is_compiled_once_and_matched_against_every_text() -> None:
    globs = compiled(("*chunk*", "release-?"))
    assert globs is compiled(("*chunk*", "release-?"))
    assert any_matches(globs, ["nothing", "Release-7"]) and not any_matches(globs, ["release-10"])
