"""What a map may be before it is parsed (app/sourcemaps/map_bounds.py): its size counted without a
parse, and each bound's sentence."""

from __future__ import annotations

import json

from app.sourcemaps.map_bounds import MAX_LINES, MAX_TOKENS, MapSize, measure, refusal


def test_lines_and_tokens_are_counted_from_the_file_and_every_mappings_string() -> None:
    plain = json.dumps({"version": 3, "sources": ["a.js"], "mappings": "AAAA,CAAC;;AACA",
                        "sourcesContent": ['x = {"mappings": "A,A,A,A,A,A"};\n']}).encode()
    assert measure(b"a\nb\n", plain) == MapSize(4 + len(plain), 3, 4)  # the one in sourcesContent is text
    sections = json.dumps({"version": 3, "sections": [
        {"offset": {"line": 0, "column": 0}, "map": {"version": 3, "sources": ["a.js"], "mappings": "AAAA;AACA"}},
        {"offset": {"line": 9, "column": 0}, "map": {"version": 3, "sources": ["b.js"], "mappings": "A,A,A"}},
    ]}).encode()
    assert measure(b"x", sections)[1:] == (2, 5)  # every section's tokens; the longest one's lines


def test_each_bound_refuses_with_its_sentence() -> None:
    assert refusal(MapSize(100, MAX_LINES, MAX_TOKENS), max_bytes=100) is None
    assert refusal(MapSize(101, 1, 1), max_bytes=100) == (
        "it is 101 bytes with its file, more than the 100 bytes of maps an event may load (LOOKOUT_SYMBOLICATE_MAX_BYTES)")
    assert refusal(MapSize(1, MAX_LINES + 1, 1), 100) == f"it has {MAX_LINES + 1} lines, more than {MAX_LINES}"
    assert refusal(MapSize(1, 1, MAX_TOKENS + 1), 100) == f"its mappings have {MAX_TOKENS + 1} tokens, more than {MAX_TOKENS}"
