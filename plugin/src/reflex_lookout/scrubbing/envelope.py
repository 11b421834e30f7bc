"""A whole envelope scrubbed, item by item, before anything of it is written anywhere.

What is kept of each part (docs/inbox-and-console.md lists the same):
- **events, transactions, feedback**: scrubbed by Relay as events (scrubbing/relay.py);
- **logs**: every field of every line (bodies with Relay's rules for log messages, attributes and
  the other fields as `extra`);
- **sessions**: `did` (a user's distinct id) hashed, the rest (`attrs`, ...) scrubbed as `extra`;
- **user reports, client reports**: scrubbed as `extra`;
- **any other item type** (attachments, replays, profiles, ...: Relay's Python API takes none of
  them): its type alone, no headers and no payload;
- **item headers** (content type, file name, ...): scrubbed as `extra`;
- **the envelope header**: without the trace header's `user_id`, `user_segment` and `user` (a
  user's identity, which nothing downstream reads), its `dsn` as sent (a public key, checked by the
  tunnel), the rest scrubbed as `extra`.

An item that may hold something to scrub (scrubbing/prefilter.py) but whose JSON cannot be read,
or that Relay refuses, is refused with the envelope (`UnscrubbableItem`, a ValueError, with a
sentence): what cannot be scrubbed is not stored. An item that provably holds nothing to scrub is
not parsed here at all (the reader that needs it parsed refuses it, if it must).
With scrubbing off (`scrub_data` false) everything is kept as sent.

The result names itself scrubbed in its header (`SCRUBBED`, set here only: a client's own is
dropped), so that a reader knows it need not scrub again. `drop(type, payload)` lets the caller
refuse an item before it is scrubbed (the inbox's inbound filters, which read it as sent): the item
then keeps its type and, in its header `FILTERED_BY`, the name of what dropped it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from reflex_lookout.protocol import payloads
from reflex_lookout.protocol.envelope import Envelope, Item
from reflex_lookout.scrubbing.prefilter import holds_nothing_to_scrub
from reflex_lookout.scrubbing.relay import SCRUBBED_ITEM_TYPES, SESSIONS, UnscrubbableItem, scrub_as_extra, scrub_item
from reflex_lookout.scrubbing.settings import ScrubbingSettings

SCRUBBED = "lookout_scrubbed"  # in the envelope header: this envelope was scrubbed before it was written
FILTERED_BY = "lookout_filtered_by"  # in an item header: the filter that dropped the item before it was written
TRACE_USER_KEYS = ("user_id", "user_segment", "user")  # the trace header's user identity: not kept
HEADER_KEYS_AS_SENT = ("type", "length")  # item header keys that are the envelope's framing, not data
# Decides whether an item is dropped before it is scrubbed: the name of what dropped it, or None.
Drop = Callable[[str, dict[str, Any]], str | None]


def scrub_envelope(parsed: Envelope, settings: ScrubbingSettings, drop: Drop | None = None,
                   dropped_types: tuple[str, ...] = ()) -> Envelope:
    """`parsed` as it may be written: filtered (`drop`, asked for items of `dropped_types`) and
    scrubbed under `settings`, named scrubbed in its header. `UnscrubbableItem` if an item cannot be."""
    items = []
    for number, item in enumerate(parsed.items, start=1):
        loaded = None
        if drop is not None and item.type in dropped_types:
            loaded = _load(item, number)
            name = drop(item.type, loaded)
            if name:
                items.append(Item(item.type, {FILTERED_BY: name}, b""))
                continue
        if not settings.scrub_data:  # as sent, but for a client's claim that a filter dropped it
            items.append(item if FILTERED_BY not in item.headers else
                         Item(item.type, {k: v for k, v in item.headers.items() if k != FILTERED_BY}, item.payload))
        elif item.type not in SCRUBBED_ITEM_TYPES:
            items.append(Item(item.type, {}, b""))
        else:
            items.append(Item(item.type, _item_headers(item.headers, settings), _payload(item, number, settings, loaded)))
    return Envelope(envelope_header(parsed.headers, settings), tuple(items))


def with_defaults(dsn: str, parsed: Envelope) -> Envelope:
    """A tunnel's `prepare` in Sentry mode with LOOKOUT_SCRUB_BEFORE_FORWARD: Relay's defaults, as a
    Relay in front of Sentry would scrub (no filters: Sentry applies its own)."""
    return scrub_envelope(parsed, ScrubbingSettings())


def envelope_header(headers: dict[str, Any], settings: ScrubbingSettings) -> dict[str, Any]:
    """The envelope header as it may be written (see the module's list), named scrubbed."""
    kept = {key: value for key, value in headers.items() if key not in (SCRUBBED, "dsn")}
    if settings.scrub_data:
        trace = kept.get("trace")
        if isinstance(trace, dict) and any(key in trace for key in TRACE_USER_KEYS):
            kept["trace"] = {key: value for key, value in trace.items() if key not in TRACE_USER_KEYS}
        kept = _scrubbed_as_extra(kept, settings)
    # The DSN names its project by a public key, no secret, and the tunnel accepted the envelope for
    # it: kept as sent (Relay's URL rule would take the key for a user name, and every header to Relay).
    dsn = {"dsn": headers["dsn"]} if "dsn" in headers else {}
    return {**kept, **dsn, SCRUBBED: 1}


def _item_headers(headers: dict[str, Any], settings: ScrubbingSettings) -> dict[str, Any]:
    data = {key: value for key, value in headers.items() if key not in HEADER_KEYS_AS_SENT and key != FILTERED_BY}
    return _scrubbed_as_extra(data, settings) if data else data


def _scrubbed_as_extra(data: dict[str, Any], settings: ScrubbingSettings) -> dict[str, Any]:
    return scrub_as_extra(data, settings, json.dumps(data).encode())


def _payload(item: Item, number: int, settings: ScrubbingSettings, loaded: dict[str, Any] | None) -> bytes:
    """The item's payload as it may be written: the very bytes sent when nothing in it needs scrubbing
    (and it holds no SDK's `_meta`, which `scrub` leaves out, nor a session's unhashed `did`)."""
    if (loaded is None and item.type not in SESSIONS and b'"_meta"' not in item.payload
            and holds_nothing_to_scrub(item.payload, settings)):
        return item.payload
    loaded = loaded if loaded is not None else _load(item, number)
    try:
        kept = scrub_item(item.type, loaded, settings, item.payload)
    except UnscrubbableItem as exc:
        raise UnscrubbableItem(f"Item {number} ({item.type}): {exc}") from None
    return item.payload if kept is loaded else json.dumps(kept).encode()


def _load(item: Item, number: int) -> dict[str, Any]:
    try:
        return payloads.load_object(item.payload)
    except payloads.UnreadablePayload as exc:
        raise UnscrubbableItem(f"Item {number} ({item.type}) cannot be read to be scrubbed: {exc}") from None
