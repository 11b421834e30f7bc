"""Item containers (`log`, `span`, `trace_metric` items holding `{"items": [record, ...]}`): each
record is held to the per-item cap and a container to MAX_RECORDS records, whatever its
`item_count` header claims (the envelope parser can only check the average a client declares).

The payload is walked one record at a time with the standard JSON decoder, so the memory spent is
one record's objects, not the whole batch's. Like Relay, a container that is not such an object is
refused; so is JSON that is not JSON (NaN, Infinity) or nested too deeply for the decoder.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterator

from reflex_lookout.protocol.envelope import CONTAINER_ITEM_TYPES, MAX_RECORDS, STRICT_JSON, Envelope, EnvelopeError, Item

_BLANK = re.compile(r"[ \t\r\n]*")


def check(parsed: Envelope, max_record_bytes: int) -> None:
    """Refuse (EnvelopeError) a container item of `parsed` with a record over `max_record_bytes` or
    more than MAX_RECORDS records; a span item that is not a container (a legacy standalone span)
    is left to the envelope's own checks."""
    for number, item in enumerate(parsed.items, start=1):
        if _is_container(item):
            _check_records(item, number, max_record_bytes)


def _is_container(item: Item) -> bool:
    if item.type not in CONTAINER_ITEM_TYPES:
        return False
    content_type = item.headers.get("content_type")
    declared = isinstance(content_type, str) and content_type.startswith("application/vnd.sentry.items.")
    return item.type != "span" or declared or "item_count" in item.headers


def _check_records(item: Item, number: int, limit: int) -> None:
    where = f"item {number} (type {item.type!r})"
    try:
        text = item.payload.decode("utf-8")
    except UnicodeDecodeError:
        raise EnvelopeError(400, f"The payload of {where} is not valid UTF-8.") from None
    count = 0
    try:
        for count, size in enumerate(_record_sizes(text), start=1):
            if count > MAX_RECORDS:
                raise EnvelopeError(413, f"The payload of {where} holds more than {MAX_RECORDS} records; "
                                         f"the limit is {MAX_RECORDS} records.")
            if size > limit:
                raise EnvelopeError(413, f"Record {count} of {where} is {size} bytes, over the {limit}-byte limit "
                                         f"for that type.")
    except RecursionError:
        raise EnvelopeError(400, f"Record {count + 1} of {where} is nested too deeply.") from None
    except ValueError as exc:  # JSONDecodeError, NaN and Infinity, ints too long to convert
        raise EnvelopeError(400, f"The payload of {where} is not a batch of records ({exc}).") from None


def _record_sizes(text: str) -> Iterator[int]:
    """The size in bytes of each record of `{"items": [...]}`, decoding one value at a time."""
    position = _expect(text, _skip(text, 0), "{")
    if text[position:position + 1] == "}":
        position += 1
    else:
        while True:
            key, position = STRICT_JSON.raw_decode(text, _skip(text, position))
            if not isinstance(key, str):
                raise ValueError("an object key must be a string")
            position = _skip(text, _expect(text, _skip(text, position), ":"))
            if key == "items":
                position = yield from _array_sizes(text, position)
            else:
                _, position = STRICT_JSON.raw_decode(text, position)
            position = _skip(text, position)
            if text[position:position + 1] != ",":
                position = _expect(text, position, "}")
                break
            position += 1
    if _skip(text, position) != len(text):
        raise ValueError("extra data after the object")


def _array_sizes(text: str, position: int) -> Generator[int, None, int]:
    """Yield each element's size in bytes; return where the array ends."""
    position = _skip(text, _expect(text, position, "["))
    if text[position:position + 1] == "]":
        return position + 1
    while True:
        _, end = STRICT_JSON.raw_decode(text, position)
        yield len(text[position:end].encode("utf-8", "surrogatepass"))
        position = _skip(text, end)
        if text[position:position + 1] != ",":
            return _expect(text, position, "]")
        position = _skip(text, position + 1)


def _skip(text: str, position: int) -> int:
    found = _BLANK.match(text, position)
    return found.end() if found else position


def _expect(text: str, position: int, mark: str) -> int:
    if text[position:position + 1] != mark:
        raise ValueError(f"expected {mark!r} at character {position}")
    return position + 1
