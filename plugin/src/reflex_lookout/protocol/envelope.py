"""Parsing of Sentry envelopes (https://develop.sentry.dev/sdk/data-model/envelopes/).

An envelope is a JSON header line followed by items; each item is a JSON header line and a payload.
A payload with a `length` header is exactly that many bytes, newlines and binary included; one
without runs to the end of its line. Only header lines are decoded: payloads are kept byte for byte
as received, because they are forwarded or stored, never re-serialised. `serialize` writes one
anew (Lookout's inbox keeps an envelope's items scrubbed that way).

Where Sentry's own parser (Relay, `relay-server/src/envelope/`) is stricter than needed, this one
is lenient in the ways real clients need, and says so:

- Whitespace between items, blank lines included, is skipped before a header, as Relay does; unlike
  Relay, trailing blank lines at the end of the body are accepted too.
- A header line may end in `\\r\\n`: JSON ignores the `\\r`. A length-delimited payload may also be
  followed by `\\r\\n`. A payload without `length` keeps any `\\r` before its `\\n`, as in Relay,
  since its bytes are the client's.
- `"length": null` and `"dsn": null` mean the header is absent, as they do for Relay's optional
  fields.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import TypeGuard

# Items Relay caps at its small per-item limits (max_event_size, max_log_size, max_span_size,
# max_trace_metric_size, max_check_in_size): single JSON documents. Attachments, replays, profiles
# and sessions have their own, far larger limits and are left to the request-size cap.
CAPPED_ITEM_TYPES = frozenset(
    {
        "event",
        "transaction",
        "security",
        "raw_security",
        "feedback",
        "replay_event",
        "check_in",
        "log",
        "otel_log",
        "span",
        "otel_span",
        "trace_metric",
    }
)

# Item types that may batch records (Relay's item containers, with an `item_count` header). As in
# Relay, the cap applies here to the average record, so a batch of many small logs is not refused;
# each record is then checked on its own (reflex_lookout/protocol/containers.py), whatever `item_count` says.
CONTAINER_ITEM_TYPES = frozenset({"log", "span", "trace_metric"})

# Items per envelope. Relay caps them per type (one event, 30 attachments, 100 sessions, 100 client
# reports, one batch of logs, ...); SDKs send a handful. One cap for all keeps the parser's work
# proportional to what a real envelope holds.
MAX_ITEMS = 1000
# Records per container item, whatever its `item_count` says (SDKs flush logs and spans by 100).
MAX_RECORDS = 1000
# A container item's whole payload (Relay's `max_container_size`), unless the item cap is larger.
MAX_CONTAINER_BYTES = 12 * 1024 * 1024
# The envelope header line must end within this many bytes (it names the DSN, the SDK, the trace).
MAX_HEADER_BYTES = 64 * 1024

# JSON whitespace, skipped before each header line.
_BLANK = re.compile(rb"[ \t\r\n]*")


class EnvelopeError(Exception):
    """An envelope that cannot be accepted: 400 when malformed, 413 when an item is too large."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Item:
    """One envelope item: its header and its payload exactly as received."""

    type: str
    headers: dict[str, object]
    payload: bytes


@dataclass(frozen=True)
class Envelope:
    """A parsed envelope: its header and its items, in order."""

    headers: dict[str, object]
    items: tuple[Item, ...]

    @property
    def dsn(self) -> str | None:
        return header_dsn(self.headers)

    @property
    def event_id(self) -> str | None:
        event_id = self.headers.get("event_id")
        return event_id if isinstance(event_id, str) else None


def header_dsn(headers: dict[str, object]) -> str | None:
    dsn = headers.get("dsn")
    return dsn if isinstance(dsn, str) else None


def parse(body: bytes, max_item_bytes: int, max_items: int = MAX_ITEMS) -> Envelope:
    """Split `body` into its header and items; any malformed input raises `EnvelopeError`, and so
    does an envelope of more than `max_items` items (413), as soon as the one too many begins."""
    position = _skip_blank(body, 0)
    if position == len(body):
        raise EnvelopeError(400, "The envelope is empty.")
    line, position = _line(body, position)
    headers = _envelope_header(line)
    items: list[Item] = []
    position = _skip_blank(body, position)
    while position < len(body):
        if len(items) == max_items:
            raise EnvelopeError(413, f"The envelope holds more than {max_items} items; the limit is {max_items} items.")
        item, position = _item(body, position, len(items) + 1, max_item_bytes)
        items.append(item)
        position = _skip_blank(body, position)
    return Envelope(headers, tuple(items))


def serialize(parsed: Envelope) -> bytes:
    """The envelope's bytes: its header line, then each item's header (with its payload's `length`)
    and payload."""
    lines = [json.dumps(parsed.headers).encode()]
    for item in parsed.items:
        lines += [json.dumps({**item.headers, "type": item.type, "length": len(item.payload)}).encode(), item.payload]
    return b"\n".join(lines)


def header_line_ended(start: bytes) -> bool:
    """Whether `start`, the beginning of a body, holds the envelope's whole header line."""
    return b"\n" in start[_skip_blank(start, 0):]


def read_header(start: bytes, max_bytes: int = MAX_HEADER_BYTES) -> dict[str, object]:
    """The envelope header, read from the start of a body: its first `max_bytes` bytes (or all of
    it, when shorter). Lets the DSN be checked before the rest is decoded or parsed."""
    position = _skip_blank(start, 0)
    end = start.find(b"\n", position)
    if end < 0 and len(start) >= max_bytes:
        raise EnvelopeError(400, f"The envelope header does not end within the body's first {max_bytes} bytes.")
    if position == len(start):
        raise EnvelopeError(400, "The envelope is empty.")
    return _envelope_header(start[position:] if end < 0 else start[position:end])


def _envelope_header(line: bytes) -> dict[str, object]:
    headers = _json_object(line, "The envelope header")
    dsn = headers.get("dsn")
    if dsn is not None and not _is_text(dsn):
        raise EnvelopeError(400, "The envelope header's dsn must be a string.")
    return headers


def _skip_blank(body: bytes, position: int) -> int:
    match = _BLANK.match(body, position)
    return match.end() if match else position


def _line(body: bytes, start: int) -> tuple[bytes, int]:
    """The line at `start` without its `\\n`, and where the next one begins."""
    end = body.find(b"\n", start)
    if end < 0:
        return body[start:], len(body)
    return body[start:end], end + 1


def _item(body: bytes, start: int, number: int, max_item_bytes: int) -> tuple[Item, int]:
    """The item whose header line begins at `start`, and where the next one may begin."""
    line, position = _line(body, start)
    headers = _json_object(line, f"The header of item {number}")
    item_type = headers.get("type")
    if not _is_text(item_type):
        raise EnvelopeError(400, f"The header of item {number} has no string type.")
    length = headers.get("length")
    if length is None:
        payload, position = _line(body, position)
    else:
        payload, position = _sized_payload(body, position, length, number)
    _check_size(item_type, headers, len(payload), number, max_item_bytes)
    return Item(item_type, headers, payload), position


def _sized_payload(body: bytes, start: int, length: object, number: int) -> tuple[bytes, int]:
    """`length` bytes from `start`, which must then be followed by a line break or the end."""
    if not _is_count(length) or length < 0:
        raise EnvelopeError(
            400, f"The length of item {number} must be a non-negative integer, not {_shown(length)}."
        )
    end = start + length
    if end > len(body):
        raise EnvelopeError(
            400,
            f"Item {number} declares {length} payload bytes but only {len(body) - start} remain.",
        )
    after = body[end : end + 2]
    if after[:1] == b"\n":
        return body[start:end], end + 1
    if after == b"\r\n":
        return body[start:end], end + 2
    if after:
        raise EnvelopeError(400, f"The payload of item {number} is not followed by a line break.")
    return body[start:end], end


def _json_object(line: bytes, what: str) -> dict[str, object]:
    """Decode one header line, which must be a UTF-8 JSON object."""
    try:
        value = STRICT_JSON.decode(line.decode("utf-8"))
    except UnicodeDecodeError:
        raise EnvelopeError(400, f"{what} is not valid UTF-8.") from None
    except RecursionError:
        raise EnvelopeError(400, f"{what} is nested too deeply.") from None
    except ValueError as exc:  # JSONDecodeError, and ints too long to convert
        raise EnvelopeError(400, f"{what} is not valid JSON ({exc}).") from None
    if not isinstance(value, dict):
        raise EnvelopeError(400, f"{what} is not a JSON object.")
    return value


def reject_constant(name: str) -> object:
    """JSON has no NaN or Infinity; Python's decoder accepts them unless told not to."""
    raise ValueError(f"{name} is not a JSON value")


def finite(text: str) -> float:
    """A JSON number as a float, refused when too large for one (`1e999` would be infinity)."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:40]} is too large for a number")
    return value


# The one strict decoder for JSON from outside: every header line and container record here, and
# every payload the inbox reads (protocol/payloads.py). `json.loads` with options builds a new
# decoder per call.
STRICT_JSON = json.JSONDecoder(parse_constant=reject_constant, parse_float=finite)


def _is_text(value: object) -> TypeGuard[str]:
    """A string that can be encoded again: JSON escapes can smuggle in lone surrogates."""
    if not isinstance(value, str):
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_size(
    item_type: str, headers: dict[str, object], size: int, number: int, limit: int
) -> None:
    if item_type not in CAPPED_ITEM_TYPES:
        return
    count = headers.get("item_count")
    if item_type in CONTAINER_ITEM_TYPES and _is_count(count):
        _check_container(item_type, count, size, number, max(limit, MAX_CONTAINER_BYTES))
        size //= max(count, 1)
        measure = f"averages {size} bytes per record"
    else:
        measure = f"is {size} bytes"
    if size > limit:
        raise EnvelopeError(
            413,
            f"Item {number} of type {item_type!r} {measure}, "
            f"over the {limit}-byte limit for that type.",
        )


def _check_container(item_type: str, count: int, size: int, number: int, limit: int) -> None:
    if count > MAX_RECORDS:
        raise EnvelopeError(
            413, f"Item {number} of type {item_type!r} says it holds {count} records; the limit is {MAX_RECORDS} records."
        )
    if size > limit:
        raise EnvelopeError(
            413, f"Item {number} of type {item_type!r} is {size} bytes, over the {limit}-byte limit for a batch of records."
        )


def _shown(value: object) -> str:
    """A header value for a message, cut short: it comes from the client."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_count(value: object) -> TypeGuard[int]:
    """JSON integers only: `true` decodes to a Python int but is no count."""
    return isinstance(value, int) and not isinstance(value, bool)
