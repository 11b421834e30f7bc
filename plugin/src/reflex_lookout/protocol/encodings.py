"""Bounded decoding of HTTP `Content-Encoding` bodies.

A request body is attacker-controlled, and compression lets a few bytes stand for gigabytes. Every
decoder here is therefore a stream driven in small steps (its input fed in slices, its output asked
for in steps of _STEP) and stopped as soon as its output would pass `max_bytes`, so the memory spent
on a body is about `max_bytes` plus one step, however it inflates, and the work about proportional
to what was decoded. `decode_start` decodes only the beginning (the envelope's header line).

Each coding must be exactly one complete stream: a gzip body with a second member or trailing bytes,
a zlib stream followed by more data, or a second zstd frame is refused as malformed. Sentry's SDKs
never send such bodies, and refusing them keeps the decoders simple and their cost proportional to
the body.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable, Iterator

import brotli
import zstandard

SUPPORTED = ("gzip", "x-gzip", "deflate", "br", "zstd", "identity")

# Stacked codings multiply the work per byte; real clients use one.
MAX_CODINGS = 4

# Output asked of zlib and brotli per step, and the slices the body is fed in (feeding it whole made
# zlib copy the rest of the input on every step: seconds for a 20 MiB body).
_STEP = 64 * 1024

# zstd's streaming API cannot cap its output, so its input is fed in slices instead. A zstd block
# holds at most 128 KiB and takes at least 4 bytes, so 128 input bytes yield at most ~4 MiB.
_ZSTD_SLICE = 128

# RFC 8878 section 3.1.1.3: the `zstd` content coding uses windows of at most 8 MiB, which also
# stops a frame header from making the decoder reserve a huge window.
_ZSTD_MAX_WINDOW = 8 * 1024 * 1024


class DecodeError(Exception):
    """A body that cannot be decoded, with the HTTP status to answer and a sentence saying why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def decode(body: bytes, content_encoding: str | None, max_bytes: int) -> bytes:
    """Undo `content_encoding` (codings listed in the order they were applied).

    The result never exceeds `max_bytes`; an identity body over it is refused as well, so callers
    get one limit on the decoded size whatever the encoding.
    """
    codings = _codings(content_encoding)
    if not codings:
        if len(body) > max_bytes:
            raise _too_large(max_bytes)
        return body
    output = bytearray()
    for chunk in _decoded(body, codings):
        _append(output, chunk, max_bytes)
    return bytes(output)


def decode_start(body: bytes, content_encoding: str | None, max_bytes: int,
                 enough: Callable[[bytes], bool] = lambda start: False) -> bytes:
    """The first `max_bytes` bytes of the decoded body (all of it when shorter), decoding no further
    than that, or than the first step after which `enough(start)` holds. Only what was decoded is
    checked: a body corrupt further on is refused by `decode`."""
    codings = _codings(content_encoding)
    if not codings:
        return body[:max_bytes]  # the body itself when it is shorter: no copy
    start = bytearray()
    for chunk in _decoded(body, codings):
        start += chunk
        if len(start) >= max_bytes or enough(bytes(start)):
            break
    return bytes(start[:max_bytes])


def is_identity(content_encoding: str | None) -> bool:
    """Whether the body is as sent, with no coding to undo (415 for an unknown one)."""
    return not _codings(content_encoding)


def _decoded(body: bytes, codings: list[str]) -> Iterator[bytes]:
    """The body decoded, lazily, in steps of about _STEP bytes."""
    view = memoryview(body)
    chunks: Iterator[bytes] = (view[start:start + _STEP] for start in range(0, len(body), _STEP))  # type: ignore[misc]  # memoryview slices, not copies: the decoders take any buffer
    for coding in reversed(codings):
        chunks = _DECODERS[coding](chunks)
    return chunks


def _codings(header: str | None) -> list[str]:
    """The codings named by a `Content-Encoding` value, without `identity`."""
    names = [name.strip().lower() for name in (header or "").split(",")]
    codings = [name for name in names if name and name != "identity"]
    for name in codings:
        if name not in _DECODERS:
            raise DecodeError(
                415,
                f"Content-Encoding {name!r} is not supported; use {', '.join(SUPPORTED)}.",
            )
    if len(codings) > MAX_CODINGS:
        raise DecodeError(
            415,
            f"Content-Encoding stacks {len(codings)} codings; at most {MAX_CODINGS} are supported.",
        )
    return codings


def _too_large(max_bytes: int) -> DecodeError:
    return DecodeError(413, f"The decompressed body exceeds {max_bytes} bytes.")


def _append(output: bytearray, chunk: bytes, max_bytes: int) -> None:
    """Add `chunk`, refusing the body before it passes `max_bytes`."""
    if len(output) + len(chunk) > max_bytes:
        raise _too_large(max_bytes)
    output += chunk


def _trailing(coding: str) -> DecodeError:
    return DecodeError(400, f"The {coding} body has trailing bytes after its compressed stream.")


def _truncated(coding: str) -> DecodeError:
    return DecodeError(400, f"The {coding} body ends before its compressed stream is complete.")


def _inflate(chunks: Iterable[bytes], wbits: int, coding: str) -> Iterator[bytes]:
    """Run zlib over `chunks`, one bounded step at a time."""
    decompressor = zlib.decompressobj(wbits)
    try:
        for data in chunks:
            if decompressor.eof:
                if data:
                    raise _trailing(coding)
                continue
            pending = data
            while not decompressor.eof:
                chunk = decompressor.decompress(pending, _STEP)
                progressed = chunk or len(decompressor.unconsumed_tail) != len(pending)
                if chunk:
                    yield chunk
                pending = decompressor.unconsumed_tail
                if not progressed:
                    break  # this input is used up: the stream needs the next
            if decompressor.unused_data:
                raise _trailing(coding)
    except zlib.error as exc:
        raise DecodeError(400, f"The {coding} body is not valid compressed data ({exc}).") from None
    if not decompressor.eof:
        raise _truncated(coding)


def _gunzip(chunks: Iterable[bytes]) -> Iterator[bytes]:
    return _inflate(chunks, 16 + zlib.MAX_WBITS, "gzip")


def _undeflate(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """`deflate` is zlib-wrapped by the RFC, but some clients send raw deflate: a stream whose first
    two bytes are no zlib header is read as raw deflate (RFC 1950 section 2.2's header check)."""
    chunks = iter(chunks)
    first = b""
    for data in chunks:
        first += data
        if len(first) >= 2:
            break
    wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
    return _inflate(itertools.chain([first], chunks), zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS, "deflate")


def _unbrotli(chunks: Iterable[bytes]) -> Iterator[bytes]:
    decompressor = brotli.Decompressor()
    try:
        for data in chunks:
            if decompressor.is_finished():
                if data:
                    raise _trailing("br")
                continue
            chunk = decompressor.process(data, output_buffer_limit=_STEP)
            while True:
                if chunk:
                    yield chunk
                if decompressor.can_accept_more_data() or decompressor.is_finished():
                    break
                chunk = decompressor.process(b"", output_buffer_limit=_STEP)
        while not decompressor.is_finished() and (chunk := decompressor.process(b"", output_buffer_limit=_STEP)):
            yield chunk  # the input is all in: what the decoder still holds
    except brotli.error:
        # The decoder names no cause; trailing bytes within a step also end up here.
        raise DecodeError(400, "The br body is not valid brotli data.") from None
    if not decompressor.is_finished():
        raise _truncated("br")


def _unzstd(chunks: Iterable[bytes]) -> Iterator[bytes]:
    decompressor = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW).decompressobj()
    try:
        for data in chunks:
            view = memoryview(data)
            for start in range(0, len(view), _ZSTD_SLICE):
                if decompressor.eof:
                    raise _trailing("zstd")
                chunk = decompressor.decompress(view[start:start + _ZSTD_SLICE])
                if chunk:
                    yield chunk
            if decompressor.eof and decompressor.unused_data:
                raise _trailing("zstd")
    except zstandard.ZstdError as exc:
        raise DecodeError(400, f"The zstd body is not valid zstd data ({exc}).") from None
    if not decompressor.eof:
        raise _truncated("zstd")


_DECODERS: dict[str, Callable[[Iterable[bytes]], Iterator[bytes]]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _undeflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}
