"""Reading a JSON document that came from outside (an envelope item, a stored event): bounded and
strict, so that one document can only ever be its own problem.

- **Depth**: at most `MAX_DEPTH` (128) levels of nesting, the limit of serde_json, the parser Sentry's
  Relay reads events with. Checked before parsing, in time linear in the size: Python's decoder
  recurses in C and raises `RecursionError` somewhere under 1,000 levels, and a document just under
  that would still break code that walks it later from deeper in the stack.
- **Numbers**: `NaN`, `Infinity` and numbers too large for a float (`1e999`) are refused. JSON has
  none of them (Python's decoder accepts them unless told not to), and downstream they break
  timestamps, sorting and JSON output (a log line's `Infinity` timestamp broke /logs).

Anything unreadable raises `UnreadablePayload` (a `ValueError`) with a sentence.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

from reflex_lookout.protocol.envelope import STRICT_JSON

MAX_DEPTH = 128

# For the depth check: escapes gone (backslash pairs first, as JSON reads them left to right), then
# strings, then everything but brackets. Each step is one linear pass: `"[^"]*"` cannot backtrack
# into itself, since no character it repeats can end it.
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1


class UnreadablePayload(ValueError):
    """A document that is not JSON, or not JSON this inbox reads (too deep, non-finite numbers)."""


def depth(data: bytes) -> int:
    """How deeply `data` nests: exact for valid JSON, an estimate for anything else."""
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = _STRING.sub(b"", unescaped).translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def loads(data: bytes | str) -> Any:
    """The JSON value of `data`; `UnreadablePayload` if it is not one this inbox reads."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and depth(raw) > MAX_DEPTH:
        raise UnreadablePayload(f"The JSON is nested more than {MAX_DEPTH} levels deep.")
    try:
        text = data if isinstance(data, str) else data.decode(json.detect_encoding(data))
        return STRICT_JSON.decode(text)
    except RecursionError:  # not reached after the check above, but never let it out
        raise UnreadablePayload(f"The JSON is nested more than {MAX_DEPTH} levels deep.") from None
    except ValueError as exc:  # JSONDecodeError, bad UTF-8, non-finite numbers, ints too long to convert
        raise UnreadablePayload(f"The payload is not valid JSON ({_short(exc)}).") from None


def load_object(data: bytes | str) -> dict[str, Any]:
    """`loads`, for a document that must be a JSON object."""
    value = loads(data)
    if not isinstance(value, dict):
        raise UnreadablePayload("The payload is not a JSON object.")
    return value


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 200 else text[:197] + "..."
