"""The parsed-map cache: bounded by count and bytes, failures and misses remembered, paths refreshed.
Times are given, not waited for."""

from __future__ import annotations

from app.sourcemaps.map_cache import MapCache, ParsedMap, Unreadable, line_lengths, parse
from app.sourcemaps.maps import StoredMap
from tests.sourcemaps.big_maps import newlines_map, stored as big_stored

SOURCE = b"function a(){throw new Error('x')}\n"
MAP = (b'{"version":3,"sources":["a.js"],"sourcesContent":["function a() {\\n  throw new Error(\'x\');\\n}\\n"],'
       b'"names":[],"mappings":"AAAA,aACE"}')


def stored(asset_path: str = "/assets/a.js", sourcemap: bytes = MAP) -> StoredMap:
    return StoredMap("", asset_path, "b1", SOURCE, sourcemap)


def test_a_map_is_parsed_with_its_line_lengths_and_a_corrupt_one_says_why() -> None:
    parsed = parse(stored())
    assert isinstance(parsed, ParsedMap) and list(parsed.line_lengths) == [len(SOURCE) - 1, 0]
    assert parsed.size == len(SOURCE) + len(MAP) + 2 * 4  # its inputs and its line table
    broken = parse(stored(sourcemap=b'{"version":3,"sources":['))
    assert isinstance(broken, Unreadable) and broken.message and broken.size == 0


def test_columns_are_counted_as_javascript_counts_them() -> None:
    assert list(line_lengths("é😀x\r\n\n".encode())) == [4, 0, 0]  # UTF-16 code units, CRLF stripped


def test_entries_go_least_recently_used_first_by_count_and_by_bytes() -> None:
    cache = MapCache(max_maps=2)
    entry = parse(stored())
    for name in ("a", "b"):
        cache.put(("debug_id", name), entry, now=0.0)
    assert cache.get(("debug_id", "a"), now=1.0) is entry  # "a" used: "b" is the oldest now
    cache.put(("debug_id", "c"), entry, now=2.0)
    assert cache.get(("debug_id", "b"), now=3.0) is None and len(cache) == 2
    by_bytes = MapCache(max_bytes=entry.size * 2)
    for name in "abc":
        by_bytes.put(("debug_id", name), entry, now=0.0)
    assert len(by_bytes) == 2 and by_bytes.bytes == entry.size * 2


def test_a_path_entry_expires_a_debug_id_entry_does_not() -> None:
    cache = MapCache(path_ttl_s=10.0)
    entry = parse(stored())
    cache.put(("asset_path", "/assets/a.js"), entry, now=0.0)
    cache.put(("debug_id", "x"), entry, now=0.0)
    assert cache.get(("asset_path", "/assets/a.js"), now=9.0) is entry
    assert cache.get(("asset_path", "/assets/a.js"), now=10.0) is None
    assert cache.stale(("asset_path", "/assets/a.js")) is entry  # kept, to reuse if the bytes are the same
    assert cache.get(("debug_id", "x"), now=1e9) is entry


def test_misses_are_remembered_for_a_while_and_bounded() -> None:
    cache = MapCache(miss_ttl_s=30.0, max_misses=2)
    cache.miss(("debug_id", "a"), now=0.0)
    assert cache.missing(("debug_id", "a"), now=29.0) and not cache.missing(("debug_id", "a"), now=30.0)
    for name in "bcd":
        cache.miss(("debug_id", name), now=0.0)
    assert [cache.missing(("debug_id", n), now=1.0) for n in "bcd"] == [False, True, True]
    cache.put(("debug_id", "d"), parse(stored()), now=2.0)  # found after all
    assert not cache.missing(("debug_id", "d"), now=3.0)


def test_a_parsed_map_counts_its_line_table_so_a_map_of_many_lines_evicts_the_others() -> None:
    newlines = newlines_map("newlines.js", 200_000)  # ~400 KB in; a table of 200,001 lines, 4 bytes each
    inputs = len(newlines.source) + len(newlines.sourcemap)
    entry = parse(big_stored(newlines))
    assert isinstance(entry, ParsedMap) and entry.size == inputs + 4 * 200_001 > 2 * inputs
    cache = MapCache(max_bytes=2 * inputs)  # room for its inputs twice, not for what it costs with its table
    small = parse(stored())
    cache.put(("debug_id", "small"), small, now=0.0)
    cache.put(("debug_id", "newlines"), entry, now=0.0)
    assert cache.get(("debug_id", "small"), now=1.0) is None and len(cache) == 1 and cache.bytes == entry.size
