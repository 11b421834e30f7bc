"""Bounded decoding of HTTP `Content-Encoding` bodies.

A request body is attacker-controlled, and compression lets a few bytes stand for gigabytes. Every
decoder here is therefore driven in small steps and stopped as soon as its output would pass
`max_bytes`, so the memory spent on a body is about `max_bytes` plus one step, however it inflates.

Each coding must be exactly one complete stream: a gzip body with a second member or trailing bytes,
a zlib stream followed by more data, or a second zstd frame is refused as malformed. Sentry's SDKs
never send such bodies, and refusing them keeps the decoders simple and their cost proportional to
the body.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import brotli
import zstandard

SUPPORTED = ("gzip", "x-gzip", "deflate", "br", "zstd", "identity")

# Stacked codings multiply the work per byte; real clients use one.
MAX_CODINGS = 4

# Output asked of zlib and brotli per step.
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
    for coding in reversed(_codings(content_encoding)):
        body = _DECODERS[coding](body, max_bytes)
    if len(body) > max_bytes:
        raise _too_large(max_bytes)
    return body


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


def _check_trailing(coding: str, trailing: bytes) -> None:
    if trailing:
        raise DecodeError(
            400,
            f"The {coding} body has {len(trailing)} trailing byte(s) after its compressed stream.",
        )


def _truncated(coding: str) -> DecodeError:
    return DecodeError(400, f"The {coding} body ends before its compressed stream is complete.")


def _inflate(data: bytes, wbits: int, max_bytes: int, coding: str) -> bytes:
    """Run zlib over `data`, one bounded step at a time."""
    decompressor = zlib.decompressobj(wbits)
    output = bytearray()
    pending = data
    try:
        while not decompressor.eof:
            chunk = decompressor.decompress(pending, _STEP)
            _append(output, chunk, max_bytes)
            if not chunk and len(decompressor.unconsumed_tail) == len(pending):
                raise _truncated(coding)  # no progress: the stream needs input it will not get
            pending = decompressor.unconsumed_tail
    except zlib.error as exc:
        raise DecodeError(400, f"The {coding} body is not valid compressed data ({exc}).") from None
    _check_trailing(coding, decompressor.unused_data)
    return bytes(output)


def _gunzip(data: bytes, max_bytes: int) -> bytes:
    return _inflate(data, 16 + zlib.MAX_WBITS, max_bytes, "gzip")


def _undeflate(data: bytes, max_bytes: int) -> bytes:
    """`deflate` is zlib-wrapped by the RFC, but some clients send raw deflate, so try both."""
    try:
        return _inflate(data, zlib.MAX_WBITS, max_bytes, "deflate")
    except DecodeError as wrapped:
        if wrapped.status != 400:
            raise
        try:
            return _inflate(data, -zlib.MAX_WBITS, max_bytes, "deflate")
        except DecodeError as raw:
            if raw.status != 400:
                raise
            raise DecodeError(
                400, "The deflate body is neither a valid zlib stream nor valid raw deflate data."
            ) from None


def _unbrotli(data: bytes, max_bytes: int) -> bytes:
    decompressor = brotli.Decompressor()
    output = bytearray()
    try:
        _append(output, decompressor.process(data, output_buffer_limit=_STEP), max_bytes)
        while not decompressor.is_finished():
            chunk = decompressor.process(b"", output_buffer_limit=_STEP)
            if not chunk:
                raise _truncated("br")  # no progress: the stream needs input it will not get
            _append(output, chunk, max_bytes)
    except brotli.error:
        # The decoder names no cause; trailing bytes after the stream also end up here.
        raise DecodeError(400, "The br body is not valid brotli data.") from None
    return bytes(output)


def _unzstd(data: bytes, max_bytes: int) -> bytes:
    decompressor = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW).decompressobj()
    output = bytearray()
    view = memoryview(data)
    end = 0
    try:
        while end < len(view) and not decompressor.eof:
            start, end = end, end + _ZSTD_SLICE
            _append(output, decompressor.decompress(view[start:end]), max_bytes)
    except zstandard.ZstdError as exc:
        raise DecodeError(400, f"The zstd body is not valid zstd data ({exc}).") from None
    if not decompressor.eof:
        raise _truncated("zstd")
    _check_trailing("zstd", decompressor.unused_data + data[end:])
    return bytes(output)


_DECODERS: dict[str, Callable[[bytes, int], bytes]] = {
    "gzip": _gunzip,
    "x-gzip": _gunzip,
    "deflate": _undeflate,
    "br": _unbrotli,
    "zstd": _unzstd,
}
