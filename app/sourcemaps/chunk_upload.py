"""A chunk-upload request's body (`POST .../chunk-upload/`, app/sourcemaps/upload_api.py), read
into checked chunks.

sentry-cli sends `multipart/form-data` with one part per chunk: field `file_gzip` (a gzip member)
or `file` (raw), its filename the SHA-1 of the uncompressed chunk. The body handed here is already
capped in size; the parts are parsed from it (python-multipart's push parser: nothing spooled to
disk), at most `max_parts` of them, each decompressed a step at a time and never past `chunk_bytes`
(reflex_lookout/protocol/encodings.py). Anything wrong refuses the whole request (`UploadRefused`: 400 for
a malformed body, a wrong name or a checksum mismatch, 413 for a chunk over `chunk_bytes`), so a
request stores all its chunks or none. CPU work: run it in a worker thread.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from app.sourcemaps.uploads import UploadRefused
from reflex_lookout.protocol.encodings import DecodeError, decode

SHA1 = re.compile(r"[0-9a-f]{40}")
FIELDS = {"file": "", "file_gzip": "gzip"}  # field → the coding of its data


@dataclass
class _Part:
    headers: dict[bytes, bytes] = field(default_factory=dict)
    data: bytearray = field(default_factory=bytearray)


def boundary_of(content_type: str | None) -> bytes:
    """The multipart boundary of a `Content-Type` value, or `UploadRefused` (400)."""
    kind, options = parse_options_header((content_type or "")[:1000])
    boundary = options.get(b"boundary", b"")
    if kind != b"multipart/form-data" or not boundary:
        raise UploadRefused(400, "Chunks are sent as multipart/form-data, with a boundary.")
    return boundary


def read_chunks(body: bytes, boundary: bytes, max_parts: int, chunk_bytes: int) -> dict[str, bytes]:
    """The chunks in `body` by SHA-1, each checked: a known field, its SHA-1 as its filename, at
    most `chunk_bytes` once decompressed."""
    chunks: dict[str, bytes] = {}
    for part in _parts(body, boundary, max_parts):
        _kind, disposition = parse_options_header(part.headers.get(b"content-disposition", b"")[:1000])
        name = disposition.get(b"name", b"").decode("latin-1")
        sha1 = disposition.get(b"filename", b"").decode("latin-1").strip().lower()
        if name not in FIELDS:
            raise UploadRefused(400, f"A part is named {name[:40]!r}: chunks are sent as file or file_gzip parts.")
        if not SHA1.fullmatch(sha1):
            raise UploadRefused(400, "A chunk's filename must be its SHA-1: 40 hex digits.")
        try:
            data = decode(bytes(part.data), FIELDS[name], chunk_bytes)
        except DecodeError as exc:
            if exc.status == 413:
                raise UploadRefused(413, f"Chunk {sha1} is over {chunk_bytes} bytes (the chunkSize this Lookout "
                                        "gives; LOOKOUT_UPLOAD_CHUNK_BYTES).") from None
            raise UploadRefused(400, f"Chunk {sha1}: {exc.message}") from None
        found = hashlib.sha1(data).hexdigest()
        if found != sha1:
            raise UploadRefused(400, f"Checksum mismatch: the chunk named {sha1} has the SHA-1 {found}.")
        chunks[sha1] = data
    return chunks


def _parts(body: bytes, boundary: bytes, max_parts: int) -> list[_Part]:
    parts: list[_Part] = []
    header = [bytearray(), bytearray()]
    ended = False

    def begin() -> None:
        if len(parts) >= max_parts:
            raise UploadRefused(400, f"A request holds at most {max_parts} chunks (chunksPerRequest).")
        parts.append(_Part())

    def header_end() -> None:
        parts[-1].headers[bytes(header[0]).strip().lower()] = bytes(header[1]).strip()
        header[0].clear()
        header[1].clear()

    def end() -> None:
        nonlocal ended
        ended = True

    try:
        parser = MultipartParser(boundary, {
            "on_part_begin": begin,
            "on_part_data": lambda data, start, stop: parts[-1].data.extend(data[start:stop]),
            "on_header_field": lambda data, start, stop: header[0].extend(data[start:stop]),
            "on_header_value": lambda data, start, stop: header[1].extend(data[start:stop]),
            "on_header_end": header_end,
            "on_end": end,
        })
        parser.write(body)
        parser.finalize()
    except FormParserError as exc:
        raise UploadRefused(400, f"The multipart body is malformed ({str(exc)[:200]}).") from None
    if not ended:
        raise UploadRefused(400, "The multipart body ends before its closing boundary.")
    if not parts:
        raise UploadRefused(400, "The request holds no chunk.")
    return parts
