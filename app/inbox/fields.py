"""Reading one field of an SDK's JSON, whatever shape that SDK gave it."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def text(value: Any) -> str:
    """A string for any JSON value ("" for null)."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def seconds(value: Any) -> float | None:
    """A Unix time from a number or an ISO 8601 string (sentry-python sends those), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None
