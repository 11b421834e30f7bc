"""What a map may be before it is parsed: at upload (app/sourcemaps/artifact_bundle.py) and again
before symbolication parses one (app/sourcemaps/map_cache.py), for maps stored before these bounds.

symbolic's `SourceMapCache.from_bytes` is one uninterruptible Rust call whose cost grows with the
map's tokens (measured here: ~0.4 s of CPU and a peak of ~175 bytes of memory per token, for 1M
tokens), and Lookout keeps a table of the served file's line lengths (4 bytes a line). So besides its
bytes (an event may load at most LOOKOUT_SYMBOLICATE_MAX_BYTES of maps, so a larger pair could
never be used), a pair is refused when its file or its mappings have more than MAX_LINES lines, or
its mappings more than MAX_TOKENS tokens. Counting is a few passes of `bytes.count`: no parse.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MAX_LINES = 1_000_000  # a minified file has a few; an unminified bundle of a large app ~100k
MAX_TOKENS = 2_000_000  # ~0.8 s of CPU and ~350 MiB at the peak of symbolic's parse
# The mappings string: base64 digits, "," and ";" only, so no escape can hide its end. A `"mappings"`
# inside `sourcesContent` is escaped (\"mappings\") and does not match.
MAPPINGS = re.compile(rb'"mappings"\s*:\s*"([A-Za-z0-9+/,;]*)"')


class MapSize(NamedTuple):
    bytes: int  # the file and its map
    lines: int  # the most of the file's lines and the mappings' generated lines
    tokens: int  # at most: the mappings' separators + 1 (all sections of an index map)


def measure(source: bytes, sourcemap: bytes) -> MapSize:
    lines, tokens = source.count(b"\n") + 1, 0
    for found in MAPPINGS.finditer(sourcemap):
        mappings = found.group(1)
        separators = mappings.count(b";") + mappings.count(b",")
        lines, tokens = max(lines, mappings.count(b";") + 1), tokens + separators + 1
    return MapSize(len(source) + len(sourcemap), lines, tokens)


def refusal(size: MapSize, max_bytes: int) -> str | None:
    """Why a pair of this size is not parsed (a sentence without its file's name), or None."""
    if size.bytes > max_bytes:
        return (f"it is {size.bytes} bytes with its file, more than the {max_bytes} bytes of maps an event "
                "may load (LOOKOUT_SYMBOLICATE_MAX_BYTES)")
    if size.lines > MAX_LINES:
        return f"it has {size.lines} lines, more than {MAX_LINES}"
    if size.tokens > MAX_TOKENS:
        return f"its mappings have {size.tokens} tokens, more than {MAX_TOKENS}"
    return None
