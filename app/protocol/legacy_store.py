"""The legacy `/store/` protocol's bodies, decoded by Relay's rules (relay-server's store endpoint).

A `/store/` body is one JSON event, sent in one of these forms:

    {"event_id": ...}                 plain JSON (what sentry-sdk's old transports posted)
    eyJldmVudF9pZCI6...               base64 of the JSON
    eJy1lE1v2zAMhv+K...              base64 of zlib-deflated JSON (raven-node 2.x)

each possibly under a `Content-Encoding` (gzip, deflate, br, zstd: raven-python 6.x posts zlib
with `Content-Encoding: deflate`). A body whose first byte (after white space) is `{` or `[` is
JSON; any other is base64, whose bytes are JSON when they start with `{` and zlib data otherwise.
A GET request carries the same forms in its `sentry_data` query parameter (url-encoded JSON or
base64), and is answered with a transparent 1×1 GIF: the "pixel" clients load it as an image.

Every step is bounded by the caller's `max_bytes` (the item cap): the `Content-Encoding` output,
the base64 text, and the inflated zlib stream, which stops as soon as it would pass the cap (a zip
bomb costs about `max_bytes` of memory and the work to get there, never more).
"""

from __future__ import annotations

import binascii
from urllib.parse import parse_qs

from reflex_lookout.protocol import encodings
from reflex_lookout.protocol.asgi import Scope

# A transparent 1×1 GIF: the answer to a pixel client's GET (Relay answers these 35 bytes too).
PIXEL = b"GIF89a\x01\x00\x01\x00\x00\xff\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x00;"

_JSON_STARTS = (b"{", b"[")  # `[` too: an array is JSON, refused later with "must be a JSON object"


def decode(raw: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """The JSON text of a `/store/` body: `content_encoding` undone, then base64 and zlib if the
    body is wrapped in them. Raises encodings.DecodeError (400 with a sentence, 413 past
    `max_bytes`, 415 for an unknown coding)."""
    body = encodings.decode(raw, content_encoding, max_bytes)
    if not body or body.lstrip()[:1] in _JSON_STARTS:
        return body
    try:
        binary = binascii.a2b_base64(body, strict_mode=True)
    except binascii.Error as exc:
        raise encodings.DecodeError(
            400, f"The event is neither JSON nor base64 (as legacy clients send it): {exc}.") from None
    if binary[:1] == b"{":
        return binary
    try:
        return encodings.decode(binary, "deflate", max_bytes)
    except encodings.DecodeError as exc:
        if exc.status == 413:
            raise
        raise encodings.DecodeError(
            400, "The event is base64, but of neither JSON nor zlib-compressed JSON "
                 "(as legacy clients send it).") from None


def query_data(scope: Scope) -> bytes:
    """The event a GET request carries in its `sentry_data` query parameter (b"" when none), as
    the url-decoded text: JSON, or base64 for `decode` to unwrap."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"), errors="replace")
    return query["sentry_data"][0].encode() if query.get("sentry_data") else b""
