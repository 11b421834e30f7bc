"""A project's inbound filters: Sentry's defaults for a new project, and the bounds on what a team types,
each refused with a sentence naming the entry."""

from __future__ import annotations

import dataclasses

import pytest

from app.projects.filter_options import MAX_ENTRIES, MAX_ENTRY_CHARS, FilterOptions, lines_of


def test_a_new_project_has_sentrys_defaults() -> None:
    made = FilterOptions()
    on = {name for name, value in dataclasses.asdict(made).items() if value}
    assert on == {"browser_extensions", "web_crawlers", "legacy_browsers"}
    assert made.checked() is made


def test_a_list_is_read_one_entry_a_line() -> None:
    typed = "  *Failed to fetch*\n\n\r\nTypeError: Load failed  \n"
    assert lines_of("error_messages", typed) == ("*Failed to fetch*", "TypeError: Load failed")
    assert lines_of("client_ips", "203.0.113.7\n10.0.0.0/8\n2001:db8::/32") == ("203.0.113.7", "10.0.0.0/8", "2001:db8::/32")
    assert lines_of("releases", "") == ()


@pytest.mark.parametrize(("name", "typed", "sentence"), [
    ("error_messages", "x\n" * (MAX_ENTRIES + 1), f"At most {MAX_ENTRIES} error-message globs, one a line (51 given)."),
    ("releases", "ok\n" + "r" * (MAX_ENTRY_CHARS + 1),
     f"The release glob on line 2 must have 1 to {MAX_ENTRY_CHARS} characters."),
    ("client_ips", "10.0.0.1\nexample.com",
     "The client IP on line 2 ('example.com') is no IP address or CIDR range (like 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32)."),
    ("client_ips", "10.0.0.0/33", "The client IP on line 1 ('10.0.0.0/33') is no IP address or CIDR range"),
    ("error_messages", "x" * 1_000_000, "The error-message globs are too long: at most 50 lines of 200 characters."),
])
def test_a_list_out_of_bounds_is_refused_with_a_sentence(name: str, typed: str, sentence: str) -> None:
    with pytest.raises(ValueError) as refused:
        lines_of(name, typed)
    assert str(refused.value).startswith(sentence)


@pytest.mark.parametrize(("options", "sentence"), [
    (FilterOptions(localhost="yes"), "The filter Events from localhost must be on or off."),  # type: ignore[arg-type]
    (FilterOptions(releases=["1.0"]), "The release globs must be a list of text."),  # type: ignore[arg-type]
    (FilterOptions(client_ips=("nowhere",)), "The client IP on line 1 ('nowhere') is no IP address"),
    (FilterOptions(error_messages=("",)), "The error-message glob on line 1 must have 1 to 200 characters."),
])
def test_options_out_of_bounds_are_refused_with_a_sentence(options: FilterOptions, sentence: str) -> None:
    with pytest.raises(ValueError) as refused:
        options.checked()
    assert str(refused.value).startswith(sentence)
