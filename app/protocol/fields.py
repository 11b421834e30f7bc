"""Reading one field of an SDK's JSON, whatever shape that SDK gave it."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any, TypeGuard

# The times an ISO 8601 string can name (years 1 to 9999): a number outside them is no time either.
EARLIEST, LATEST = -62135596800.0, 253402300800.0
# What a JSON string can hold and a database column cannot: NUL (PostgreSQL refuses it) and halves
# of a surrogate pair (no UTF-8 encoding).
UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def whole(value: object) -> TypeGuard[int]:
    """Whether a value from outside (JSON, a client's event argument) is a whole number: `true`
    is an int to Python but no number, and a float or text is not one either."""
    return isinstance(value, int) and not isinstance(value, bool)


def mapping(value: Any) -> dict[str, Any]:
    """`value` when the payload has an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def listed(value: Any) -> list[Any]:
    """`value` when the payload has an array there, else an empty one."""
    return value if isinstance(value, list) else []


def text(value: Any) -> str:
    """A string for any JSON value ("" for null), with what no database stores replaced by U+FFFD."""
    if value is None:
        return ""
    found = value if isinstance(value, str) else str(value)
    return found if found.isascii() and "\x00" not in found else UNSTORABLE.sub("\ufffd", found)


def cut(value: Any, length: int) -> str:
    """`text(value)`, at most `length` characters: every string from an SDK is bounded before use."""
    return text(value)[:length]


def seconds(value: Any) -> float | None:
    """A Unix time from a number or an ISO 8601 string (sentry-python sends those), else None (also
    for NaN, infinities and numbers past the year 9999, which no consumer of a time can place)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        found = float(value) if EARLIEST <= value <= LATEST else math.nan
    elif isinstance(value, str) and len(value) <= 64:
        try:
            found = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except (ValueError, OverflowError):
            return None
    else:
        return None
    return found if math.isfinite(found) else None
