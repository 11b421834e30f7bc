"""A project's dev servers as a person types them: each an origin, in one spelling, within bounds, or
a sentence."""

from __future__ import annotations

import pytest

from app.projects.sourcemap_options import (
    MAX_DEV_SERVERS,
    MAX_ORIGIN_CHARS,
    MAX_TYPED_CHARS,
    SourceMapOptions,
    checked_origin,
    origin_of,
    origins_of,
)


@pytest.mark.parametrize(("typed", "origin"), [
    ("http://127.0.0.1:3000", "http://127.0.0.1:3000"),
    (" HTTP://LocalHost:3000/ ", "http://localhost:3000"),
    ("http://dev.example.test:80", "http://dev.example.test"),
    ("https://dev.example.test:443/", "https://dev.example.test"),
    ("https://dev.example.test:8443", "https://dev.example.test:8443"),
    ("http://[::1]:5173", "http://[::1]:5173"),
])
def test_an_origin_is_kept_in_one_spelling(typed: str, origin: str) -> None:
    assert checked_origin(typed) == origin == origin_of(origin)


@pytest.mark.parametrize("typed", [
    "127.0.0.1:3000", "ftp://127.0.0.1", "file:///etc/passwd", "javascript:alert(1)", "http://", "http://:3000",
    "http://user:secret@127.0.0.1:3000", "http://127.0.0.1:3000/app", "http://127.0.0.1:3000?x=1", "http://h#top",
    "http://h:3000?", "http://h:99999", "http://h:port", "http://exa mple.test", "http://ex_ample.test",
    "http://" + "a" * MAX_ORIGIN_CHARS, "",
])
def test_anything_else_gets_a_sentence_naming_its_line(typed: str) -> None:
    with pytest.raises(ValueError, match=r"^The dev server on line 3 \(.*\) must be an origin such as http://127\.0\.0\.1:3000"):
        checked_origin(typed, 3)


def test_a_frame_url_is_compared_in_the_same_spelling() -> None:
    assert origin_of("HTTP://127.0.0.1:3000/app/routes/_index.jsx?import") == "http://127.0.0.1:3000"
    assert origin_of("app:///assets/a.js") is None and origin_of("http://u@h/a.js") is None


def test_the_list_is_bounded_in_order_and_each_once() -> None:
    assert origins_of(" http://a:1 \n\nhttp://B:2\n") == ("http://a:1", "http://B:2")
    assert SourceMapOptions(("http://a:1", "http://B:2/", "http://b:2")).checked() == SourceMapOptions(
        ("http://a:1", "http://b:2"))
    assert SourceMapOptions().checked().dev_servers == ()
    with pytest.raises(ValueError, match=f"^At most {MAX_DEV_SERVERS} dev servers, one a line \\(11 given\\)\\.$"):
        SourceMapOptions(tuple(f"http://h:{port}" for port in range(1, 12))).checked()
    with pytest.raises(ValueError, match="^The dev servers are too long"):
        origins_of("x" * (MAX_TYPED_CHARS + 1))
    with pytest.raises(ValueError, match="^The dev servers must be a list of origins"):
        SourceMapOptions(["http://a:1"]).checked()  # type: ignore[arg-type]  # as a stored row could hold
