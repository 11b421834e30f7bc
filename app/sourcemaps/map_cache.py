"""Parsed source maps, kept in memory between events, bounded.

A map is parsed once (symbolic's `SourceMapCache`) and kept under its key — its debug ID, or the
asset path it was found by — least recently used first out, within `max_maps` entries and
`max_bytes` of what the parsed maps cost in memory (`ParsedMap.size`: one map larger than that is
kept alone). A map over the bounds of app/sourcemaps/map_bounds.py is not parsed. A map that could
not be parsed is kept too, as `Unreadable` (counted as an entry), so a corrupt or oversized map costs
one lookup, not one per event. A key the
lookup found nothing for is remembered for `miss_ttl_s` (at most `max_misses` of them): the build
may be imported later. What a debug ID names never changes; what an asset path names can (a
newer build, a dev module edited), so an entry found by path is looked up again after
`path_ttl_s`, and reused if the bytes are the same.
"""

from __future__ import annotations

import array
import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from symbolic.sourcemapcache import SourceMapCache

from app.settings import SETTINGS
from app.sourcemaps.map_bounds import measure, refusal
from app.sourcemaps.maps import StoredMap
from app.sourcemaps.source_paths import REFLEX_UPLOAD, is_upload
from reflex_lookout.sourcemaps import map_pages
from reflex_lookout.sourcemaps.pages import PageSource

MESSAGE_LENGTH = 300  # of symbolic's reason for refusing a map
# Of `ParsedMap.size`: one build of this app is ~9 MiB of inputs and 1.5 KiB of line tables (minified: few lines).
MAX_BYTES = 64 * 1024 * 1024
LINE_TYPE = "I"  # a line's length in an array: 4 bytes (a tuple of ints took 8 to 36)


@dataclass(frozen=True)
class ParsedMap:
    debug_id: str
    build_id: str
    asset_path: str
    cache: SourceMapCache = field(repr=False)
    line_lengths: array.array[int]  # the served file's lines, in UTF-16 code units (what JS columns count)
    # What it costs in memory: its inputs (symbolic keeps less: 0.14 to 0.55 times them, measured
    # by RSS on generated maps and this app's build) and the line table.
    size: int
    digest: bytes
    pages: dict[str, PageSource] = field(default_factory=dict)
    # The build whose path rules apply (source_paths.py), when not `build_id`'s: an uploaded map of a
    # Reflex app made by reflex-lookout's build step is laid out as this app's builds (map_pages.py).
    layout: str = ""

    @property
    def paths_of(self) -> str:
        return self.layout or self.build_id


@dataclass(frozen=True)
class Unreadable:
    """A map symbolic refused: why (cut), and which file it was for."""
    message: str
    debug_id: str
    asset_path: str
    digest: bytes
    size: int = 0


Entry = ParsedMap | Unreadable


def parse(stored: StoredMap, max_bytes: int = SETTINGS.symbolicate_max_bytes) -> Entry:
    """The map parsed, or why not: over its bounds (`max_bytes`: of the file and its map), or refused
    by symbolic."""
    digest = fingerprint(stored)
    refused = refusal(measure(stored.source, stored.sourcemap), max_bytes)
    if refused is not None:
        return Unreadable(refused, stored.debug_id, stored.asset_path, digest)
    try:
        cache = SourceMapCache.from_bytes(stored.source, stored.sourcemap)
    except Exception as exc:  # noqa: BLE001 (symbolic raises its own kinds for every way a map can be wrong)
        return Unreadable(str(exc)[:MESSAGE_LENGTH] or type(exc).__name__, stored.debug_id, stored.asset_path, digest)
    lines = line_lengths(stored.source)
    carried = map_pages.pages_of(stored.sourcemap)  # a Reflex build's map: the pages it carries
    layout = REFLEX_UPLOAD if carried is not None and is_upload(stored.build_id) else ""
    return ParsedMap(stored.debug_id, stored.build_id, stored.asset_path, cache, lines,
                     len(stored.source) + len(stored.sourcemap) + len(lines) * lines.itemsize, digest,
                     dict(stored.pages) or carried or {}, layout)


def fingerprint(stored: StoredMap) -> bytes:
    hashed = hashlib.blake2b(stored.source, digest_size=16)
    hashed.update(stored.sourcemap)
    return hashed.digest()


def line_lengths(source: bytes) -> array.array[int]:
    """The length of each line of `source` in UTF-16 code units, as a browser counts columns."""
    lengths = array.array(LINE_TYPE)
    for line in source.split(b"\n"):
        line = line.removesuffix(b"\r")
        lengths.append(len(line) if line.isascii() else len(line.decode("utf-8", "replace").encode("utf-16-le")) // 2)
    return lengths


class MapCache:
    def __init__(self, max_maps: int = 200, max_bytes: int = MAX_BYTES, path_ttl_s: float = 10.0,
                 miss_ttl_s: float = 30.0, max_misses: int = 2000) -> None:
        self.max_maps, self.max_bytes, self.max_misses = max_maps, max_bytes, max_misses
        self.path_ttl_s, self.miss_ttl_s = path_ttl_s, miss_ttl_s
        self.bytes = 0
        self._entries: OrderedDict[tuple[str, str], tuple[Entry, float]] = OrderedDict()
        self._misses: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple[str, str], now: float) -> Entry | None:
        """The entry kept under `key`, if it has not expired."""
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[1] <= now:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def stale(self, key: tuple[str, str]) -> Entry | None:
        """The entry under `key`, expired or not (to reuse it when the lookup gives the same bytes)."""
        with self._lock:
            found = self._entries.get(key)
            return found[0] if found else None

    def missing(self, key: tuple[str, str], now: float) -> bool:
        """Whether the lookup found nothing for `key` within the last `miss_ttl_s`."""
        with self._lock:
            until = self._misses.get(key)
            if until is not None and until <= now:
                del self._misses[key]
                return False
            return until is not None

    def put(self, key: tuple[str, str], entry: Entry, now: float) -> None:
        expires = now + self.path_ttl_s if key[0] == "asset_path" else float("inf")
        with self._lock:
            self._misses.pop(key, None)
            self._drop(key)
            self._entries[key] = (entry, expires)
            self.bytes += entry.size
            while len(self._entries) > 1 and (len(self._entries) > self.max_maps or self.bytes > self.max_bytes):
                self._drop(next(iter(self._entries)))

    def miss(self, key: tuple[str, str], now: float) -> None:
        with self._lock:
            self._drop(key)
            self._misses[key] = now + self.miss_ttl_s
            self._misses.move_to_end(key)
            while len(self._misses) > self.max_misses:
                self._misses.popitem(last=False)

    def _drop(self, key: tuple[str, str]) -> None:
        found = self._entries.pop(key, None)
        if found is not None:
            self.bytes -= found[0].size
