"""What a message shows of an alert: one line per field, cut, times in UTC, only safe web links."""

from __future__ import annotations

import pytest

from app.alerts.alert import AlertItem
from app.alerts.message_fields import LINK_LENGTH, clean, fit, shown


def alert(**changes: object) -> AlertItem:
    fields: dict[str, object] = {
        "dedupe_key": "0" * 32, "rule": "regression", "reason": "A regression.", "project": "shop", "issue_id": 7,
        "title": "Boom", "level": "error", "environment": "", "release": "", "culprit": "", "first_seen": 0.0,
        "last_seen": 0.0, "event_count": 1, "link": "https://lookout.example.com/issues/7",
    }
    return AlertItem(**{**fields, **changes})  # type: ignore[arg-type]  # each field's value is of its type


def test_clean_keeps_one_line_and_cuts_with_an_ellipsis() -> None:
    assert clean("a\r\nb\tc\x00d\u2028e", 100) == "a  b c d e"
    assert clean("  padded  ", 100) == "padded"
    assert clean("x" * 10, 10) == "x" * 10 and clean("x" * 11, 10) == "x" * 9 + "…"
    assert clean("evil\u202etxt.exe", 100) == "evil txt.exe"  # no right-to-left override
    assert clean("half \ud800 pair", 100) == "half \ufffd pair"


def test_fit_counts_escapes_and_never_cuts_one() -> None:
    def amp(c: str) -> str:
        return "&amp;" if c == "&" else c

    assert fit("a&b", 7, amp) == "a&amp;b"
    assert fit("a&b", 6, amp) == "a…" and fit("ab&", 6, amp) == "ab…"
    assert fit("\U0001f600" * 3, 4) == "\U0001f600…"  # an emoji is 2 UTF-16 units


def test_times_are_utc_and_any_number_is_a_time() -> None:
    seen = shown(alert(first_seen=1_700_000_000.5, last_seen=float("inf")))
    assert seen.first_seen_iso == "2023-11-14T22:13:20Z"
    assert seen.last_seen_iso == "1970-01-01T00:00:00Z"
    assert shown(alert(last_seen=1e300)).last_seen_iso == "9999-12-31T23:59:59Z"
    assert ("First seen", "2023-11-14 22:13:20 UTC", 30) in seen.facts()


@pytest.mark.parametrize(
    ("link", "web"),
    [
        ("https://lookout.example.com/issues/7", "https://lookout.example.com/issues/7"),
        ("HTTP://lookout.example.com/issues/7", "HTTP://lookout.example.com/issues/7"),
        ("https://lookout.example.com/issue?id=7", "https://lookout.example.com/issue?id=7"),
        ("https://lookout.example.com/a b|<c>", "https://lookout.example.com/a%20b%7C%3Cc%3E"),
        ("/issues/7", ""),
        ("javascript:alert(1)", ""),
        ("https:///issues/7", ""),
        ("http://[::1/issues/7", ""),
        ("https://lookout.example.com/" + "p" * LINK_LENGTH, ""),
    ],
)
def test_only_an_http_url_is_a_web_link(link: str, web: str) -> None:
    assert shown(alert(link=link)).web_link == web


def test_an_overlong_link_is_not_shown_cut() -> None:
    assert shown(alert(link="/" + "p" * LINK_LENGTH)).link == ""


def test_the_rule_is_named_for_people() -> None:
    assert shown(alert()).label == "Regression" and shown(alert(rule="other")).label == "Alert"
    assert shown(alert(event_count=10**40)).event_count == 2**63 - 1
