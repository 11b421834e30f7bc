"""Short ids: `PROJECT-N` with N the issue id in base 36, as Sentry's clients expect."""

from __future__ import annotations

import pytest

from app.inbox.short_ids import MAX_ISSUE_ID, base36, parse_short_id, short_id, short_name


@pytest.mark.parametrize(("name", "expected"), [
    ("Lookout", "LOOKOUT"),
    ("Billing service", "BILLING-SERVICE"),
    ("  my.app -- (web)  ", "MY-APP-WEB"),
    ("Café crème", "CAF-CR-ME"),  # only A-Z and 0-9 stay
    ("!!!", "PROJECT"),
    ("", "PROJECT"),
])
def test_a_projects_short_name(name: str, expected: str) -> None:
    assert short_name(name) == expected


def test_a_short_id_is_the_short_name_and_the_id_in_base_36() -> None:
    assert short_id("Lookout", 1) == "LOOKOUT-1"
    assert short_id("Billing service", 71) == "BILLING-SERVICE-1Z"
    assert short_id("x", 36) == "X-10"
    assert base36(0) == "0" and base36(MAX_ISSUE_ID) == "1Y2P0IJ32E8E7"
    with pytest.raises(ValueError, match="negative"):
        base36(-1)


@pytest.mark.parametrize("issue_id", [1, 35, 36, 1295, 1296, 123_456_789, MAX_ISSUE_ID])
def test_parsing_a_short_id_gives_back_its_project_and_issue(issue_id: int) -> None:
    assert parse_short_id(short_id("Billing service", issue_id)) == ("BILLING-SERVICE", issue_id)


def test_parsing_is_case_insensitive_and_refuses_what_is_not_a_short_id() -> None:
    assert parse_short_id(" lookout-1z ") == ("LOOKOUT", 71)
    for text in ("LOOKOUT", "LOOKOUT-", "-1", "LOOKOUT-0", "LOOK OUT-1", "LOOKOUT-1.5", "LOOKOUT--1",
                 "LOOKOUT-" + "Z" * 14, "LOOKOUT-" + base36(MAX_ISSUE_ID + 1), "A" * 300 + "-1"):
        assert parse_short_id(text) is None, text
