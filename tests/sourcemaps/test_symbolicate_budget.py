"""What symbolicating one event may cost (app/sourcemaps/symbolicate.py): the bytes of maps it parses
and its thread's CPU time, over generated maps and real symbolic. Past either, the event's other
frames stay as sent and say why; the next event has a budget of its own. The decision is asserted
(the frames' sentences, the lookups made), never a duration."""

from __future__ import annotations

from app.sourcemaps.map_bounds import MAX_LINES
from app.sourcemaps.symbolicate import Symbolicator
from tests.sourcemaps.big_maps import event_naming, frames_of, lines_map, newlines_map, stored
from tests.sourcemaps.reflex_like_build import Maps

MIB = 1024 * 1024
BIG = lines_map("big.js", 120_000)  # ~1.2 MB: a map that costs something to parse
SMALL = lines_map("small.js", 100)
OTHER = lines_map("other.js", 100)
BYTES_SPENT = ("Not mapped: this event's source maps come to more than the 1048576 bytes it may load "
               "(LOOKOUT_SYMBOLICATE_MAX_BYTES).")
CPU_SPENT = "Not mapped: symbolicating this event took more than its 1 ms of CPU (LOOKOUT_SYMBOLICATE_MAX_CPU_MS)."


def test_past_its_bytes_an_event_keeps_its_other_frames_as_sent_and_the_next_event_is_mapped() -> None:
    a, b = lines_map("a.js", 60_000), lines_map("b.js", 60_000)  # ~0.6 MB each: one fits in 1 MiB, not both
    maps = Maps(stored(a), stored(b), stored(SMALL))
    symbolicator = Symbolicator(maps, max_bytes=MIB)
    event = event_naming((SMALL, 7), (b, 9), (a, 50_000))  # innermost last: a is mapped first
    assert symbolicator.symbolicate(event)
    small, in_b, in_a = frames_of(event)
    assert in_a["lineno"] == 50_000 and in_a["data"]["sourcemap"]["debug_id"] == a.debug_id
    assert in_b["data"] == {"sourcemap_error": BYTES_SPENT} and in_b["abs_path"] == "app:///assets/b.js"
    assert small["data"] == {"sourcemap_error": BYTES_SPENT}  # the rest of the event too, its map unread
    assert maps.lookups == 2
    after = event_naming((SMALL, 7), (b, 9))  # a budget of its own: b (not kept) is parsed now
    assert symbolicator.symbolicate(after)
    assert [f["data"]["sourcemap"]["debug_id"] for f in frames_of(after)] == [SMALL.debug_id, b.debug_id]


def test_past_its_cpu_time_an_event_keeps_its_other_frames_as_sent() -> None:
    maps = Maps(stored(BIG), stored(SMALL))
    symbolicator = Symbolicator(maps, max_cpu_ms=1)  # parsing BIG alone takes more thread CPU than that
    event = event_naming((SMALL, 3), (BIG, 2), (BIG, 100_000))
    assert symbolicator.symbolicate(event)
    small, outer, innermost = frames_of(event)
    assert innermost["lineno"] == 100_000 and "sourcemap" in innermost["data"]  # the first frame is always tried
    assert outer["data"] == small["data"] == {"sourcemap_error": CPU_SPENT}
    assert maps.lookups == 1  # SMALL's map was not even looked up
    after = event_naming((SMALL, 3), (BIG, 2))  # BIG is parsed and kept: the next event is cheap
    assert Symbolicator(maps, symbolicator.cache).symbolicate(after)
    assert all("sourcemap" in f["data"] for f in frames_of(after))


def test_a_map_no_event_may_parse_is_refused_once_before_parsing_and_remembered() -> None:
    newlines = newlines_map("newlines.js", MAX_LINES)  # 2 MB of line breaks: "64 MiB of newlines", smaller
    too_big = lines_map("too-big.js", 320_000)  # ~3.2 MB, over the whole budget of 3 MiB
    maps = Maps(stored(newlines), stored(too_big), stored(SMALL))
    symbolicator = Symbolicator(maps, max_bytes=3 * MIB)
    for _ in range(2):
        event = event_naming((SMALL, 1), (too_big, 5), (newlines, 5))
        assert symbolicator.symbolicate(event)
        small, big, lines = frames_of(event)
        assert lines["data"]["sourcemap_error"] == (
            f"The source map of /assets/newlines.js is unreadable: it has {MAX_LINES + 1} lines, more than {MAX_LINES}")
        assert big["data"]["sourcemap_error"].startswith(
            f"The source map of /assets/too-big.js is unreadable: it is {len(too_big.source) + len(too_big.sourcemap)} "
            f"bytes with its file, more than the {3 * MIB} bytes of maps an event may load")
        assert small["data"]["sourcemap"]["debug_id"] == SMALL.debug_id  # refusing them spent nothing of its budget
    assert maps.lookups == 3  # each map read once: the refusals are kept
