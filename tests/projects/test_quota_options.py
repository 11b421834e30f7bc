"""A quota as a person types it: a whole number within its bound, or a sentence; the windows of the
quotas that are set."""

from __future__ import annotations

import pytest

from app.projects.quota_options import MAX_PER_HOUR, MAX_PER_MINUTE, QuotaOptions, number_of


@pytest.mark.parametrize(("typed", "read"), [("", 0), (" 0 ", 0), ("1,000", 1000), ("25 000", 25_000),
                                             (f"{MAX_PER_MINUTE}", MAX_PER_MINUTE)])
def test_a_whole_number_is_read(typed: str, read: int) -> None:
    assert number_of("per_minute", typed) == read


@pytest.mark.parametrize("typed", ["-1", "+1", "1.5", "1e3", "0x10", "٣", "ten", f"{MAX_PER_MINUTE + 1}", "1" * 21])
def test_anything_else_gets_a_sentence(typed: str) -> None:
    with pytest.raises(ValueError, match=r"^Events a minute must be a whole number from 0 \(no limit\) to 1,000,000\.$"):
        number_of("per_minute", typed)


def test_the_limits_are_the_windows_that_are_set() -> None:
    assert QuotaOptions().limits() == {}
    assert QuotaOptions(per_hour=MAX_PER_HOUR).checked().limits() == {3600: MAX_PER_HOUR}
    assert QuotaOptions(5, 7).limits() == {60: 5, 3600: 7}
