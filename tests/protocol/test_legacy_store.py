"""The legacy /store/ bodies, decoded as Relay decodes them: JSON, base64 of JSON, base64 of zlib
(raven-node), each under any Content-Encoding, bounded at every step; the GET's sentry_data."""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from urllib.parse import quote

import brotli
import pytest

from app.protocol.legacy_store import decode, query_data
from reflex_lookout.protocol.encodings import DecodeError

EVENT = json.dumps({"message": "héllo from a legacy client", "level": "error"}).encode()
LIMIT = 64 * 1024


def b64(data: bytes) -> bytes:
    return base64.b64encode(data)


@pytest.mark.parametrize(("body", "coding"), [
    (EVENT, None),
    (b"  \n" + EVENT, None),  # JSON after white space is still JSON, not base64
    (b64(EVENT), None),
    (b64(zlib.compress(EVENT)), None),  # raven-node 2.x
    (zlib.compress(EVENT), "deflate"),  # raven-python 6.x
    (gzip.compress(EVENT), "gzip"),
    (brotli.compress(EVENT), "br"),
    (gzip.compress(b64(zlib.compress(EVENT))), "gzip"),  # both wrappings at once
], ids=["json", "json-after-space", "base64", "base64-zlib", "deflate", "gzip", "br", "gzip-of-base64-zlib"])
def test_each_body_form_gives_the_json(body: bytes, coding: str | None) -> None:
    assert decode(body, coding, LIMIT).lstrip() == EVENT


def test_an_empty_body_stays_empty_for_the_json_reader_to_refuse() -> None:
    assert decode(b"", None, LIMIT) == b""


@pytest.mark.parametrize(("body", "sentence"), [
    (b"not base64!", "The event is neither JSON nor base64 (as legacy clients send it)"),
    (b64(b"\x00 neither json nor zlib"), "The event is base64, but of neither JSON nor zlib-compressed JSON"),
    (b64(zlib.compress(EVENT)[:-6]), "The event is base64, but of neither JSON nor zlib-compressed JSON"),
], ids=["bad-base64", "base64-of-garbage", "truncated-zlib"])
def test_a_broken_body_is_refused_with_a_sentence(body: bytes, sentence: str) -> None:
    with pytest.raises(DecodeError) as refused:
        decode(body, None, LIMIT)
    assert refused.value.status == 400 and refused.value.message.startswith(sentence)


def test_a_zlib_bomb_in_base64_stops_at_the_cap() -> None:
    bomb = b64(zlib.compress(b"{" + b" " * (200 * LIMIT), 9))  # ~20 KB that would inflate to 12.5 MiB
    assert len(bomb) < LIMIT
    with pytest.raises(DecodeError) as refused:
        decode(bomb, None, LIMIT)
    assert refused.value.status == 413


def test_base64_text_over_the_cap_is_refused_before_it_is_decoded() -> None:
    with pytest.raises(DecodeError) as refused:
        decode(b64(zlib.compress(EVENT)) * (LIMIT // 10), None, LIMIT)
    assert refused.value.status == 413


def test_base64_of_json_over_the_cap_after_a_content_encoding_is_refused() -> None:
    with pytest.raises(DecodeError) as refused:
        decode(gzip.compress(b64(b"{" + b" " * LIMIT + b"}")), "gzip", LIMIT)
    assert refused.value.status == 413


@pytest.mark.parametrize("data", [quote(EVENT.decode()).encode(), quote(b64(zlib.compress(EVENT))).encode()],
                         ids=["urlencoded-json", "base64-zlib"])
def test_the_get_carries_the_event_in_sentry_data(data: bytes) -> None:
    scope = {"query_string": b"sentry_key=k&sentry_version=7&sentry_data=" + data}
    assert decode(query_data(scope), None, LIMIT) == EVENT
    assert query_data({"query_string": b"sentry_key=k"}) == b""
