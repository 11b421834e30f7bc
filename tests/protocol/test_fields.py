"""Reading one field of an SDK's JSON: times that cannot be placed are no time."""

from __future__ import annotations

import pytest

from app.protocol.fields import seconds, text


@pytest.mark.parametrize(("value", "expected"), [
    (1700000000, 1700000000.0),
    (1.5, 1.5),
    ("2026-11-22T10:00:00.500000Z", 1795341600.5),
    ("2026-11-22T10:00:00+01:00", 1795338000.0),
    (float("inf"), None), (float("-inf"), None), (float("nan"), None),
    pytest.param(10**400, None, id="10**400"),  # float() of it overflowed
    (1e300, None), (-1e300, None),  # past the year 9999 either way
    pytest.param("9" * 10_000, None, id="10000 digits"), ("yesterday", None), (True, None), (None, None), ({"t": 1}, None),
])
def test_seconds(value: object, expected: float | None) -> None:
    assert seconds(value) == expected


def test_text() -> None:
    assert (text(None), text("a"), text(1), text([1])) == ("", "a", "1", "[1]")
