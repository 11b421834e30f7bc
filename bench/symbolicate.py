"""Symbolication cost: browser stack traces mapped through the real source maps of a production build.

The maps and events are bench/browser_stacks.py's: the app's own production build when one is on
disk (else one built here with esbuild, said in the output), imported into a real SQLite file
(`import_bundle`) and read back through `MapLibrary`, as the app does; 30-frame browser events whose
frames are real positions of real tokens of the build's 6 largest chunks, 5 from each.

1. Warm cache: the same event again and again (maps parsed, positions remembered: dictionary hits),
   and events whose positions were never seen (maps parsed, a new position cache per event: every
   frame a symbolic lookup). The goal (median ≤ 0.5 ms per event) is judged on the second; beside
   it, what symbolic's own lookup costs per frame, before any of Lookout's Python.
2. First event of a new build: a new Symbolicator over the database, cold; then, per chunk, the
   database read and symbolic's parse.
3. The feeder (app/ingest/feeder.py) reading N envelopes from the outbox into the inbox, with and
   without symbolication, in the same run, in ABBA order. Half the events (`--own-stacks`) have a
   stack of their own, the others share one of 10; every event id is distinct. The store with
   symbolication starts with a new Symbolicator (its first maps parsed during the run), and keeps
   each symbolicated event as sent with a patch of its mapped frames (app/sourcemaps/event_patch.py),
   where an unsymbolicated one stays in its envelope; the output says how much a stored event's row keeps.

    .venv/bin/python -m bench.symbolicate [--events 2000] [--runs 2] [--repeat 2000] [--own-stacks 0.5]
                                          [--bundle DIR | --esbuild]

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import sqlalchemy

from app import db
from app.inbox.reading import InboxReader
from app.inbox.search import IssueSearch
from app.inbox.tables import EVENTS
from app.ingest.store import InboxStore
from app.sourcemaps.library import MapLibrary, import_bundle
from app.sourcemaps.map_cache import MapCache, ParsedMap, parse
from app.sourcemaps.symbolicate import Symbolicator
from bench.browser_stacks import Chunk, Stacks, chunks_of, find_build, mapped
from bench.harness.feeding import fed_per_second, unscrubbed
from bench.harness.stats import percentile
from reflex_lookout.dsn import Dsn

WARM_GOAL_MS = 0.5
RATE_GOAL = 0.7
FRAMES = 30
LOCAL_DSN = "http://bench@localhost/1"


def timed(symbolicator: Symbolicator, event: dict[str, Any]) -> float:
    start = time.perf_counter()
    symbolicator.symbolicate(event)
    return (time.perf_counter() - start) * 1000


def warm(engine: sqlalchemy.Engine, stacks: Stacks, repeat: int) -> dict[str, Any]:
    """ms per event: the same event each time, then events with positions never seen (a new
    Symbolicator, so a new position cache, per event; the parsed maps shared)."""
    cache = MapCache()
    same = Symbolicator(MapLibrary(engine), cache)
    text = json.dumps(stacks.event(stacks.next_stack(), "same"))
    first = json.loads(text)
    same.symbolicate(first)  # parses the maps
    seen = [timed(same, json.loads(text)) for _ in range(repeat)]
    unseen, frames_mapped = [], 0
    for _ in range(repeat):
        event = stacks.event(stacks.next_stack(), "unseen")
        unseen.append(timed(Symbolicator(MapLibrary(engine), cache), event))
        frames_mapped += mapped(event)
    return {"seen": seen, "unseen": unseen, "mapped_same": mapped(first),
            "mapped_unseen": frames_mapped / repeat}


def lookup_floor(engine: sqlalchemy.Engine, stacks: Stacks, count: int = 1000) -> list[float]:
    """µs per call of symbolic's own lookup (no context lines, as for a library frame), per chunk, over `count` of its positions:
    what a frame costs before any of Lookout's Python."""
    floors = []
    for chunk in stacks.chunks:
        stored = MapLibrary(engine).by_debug_id(chunk.debug_id)
        assert stored is not None, chunk.asset_path
        entry = parse(stored)
        assert isinstance(entry, ParsedMap), entry
        positions = chunk.positions[:count]
        start = time.perf_counter()
        for line, column, _ in positions:
            entry.cache.lookup(line, column, 0)
        floors.append((time.perf_counter() - start) / len(positions) * 1e6)
    return floors


def cold(engine: sqlalchemy.Engine, stacks: Stacks, rounds: int) -> tuple[list[float], list[tuple[Chunk, float, float]]]:
    """ms for the first event of a new Symbolicator (`rounds` times), then per chunk: read from the
    database and parsed by symbolic (median of `rounds`)."""
    firsts = [timed(Symbolicator(MapLibrary(engine)), stacks.event(stacks.next_stack(), "cold")) for _ in range(rounds)]
    library, per_chunk = MapLibrary(engine), []
    for chunk in stacks.chunks:
        reads, parses = [], []
        for _ in range(rounds):
            start = time.perf_counter()
            stored = library.by_debug_id(chunk.debug_id)
            reads.append((time.perf_counter() - start) * 1000)
            assert stored is not None, chunk.asset_path
            start = time.perf_counter()
            parse(stored)
            parses.append((time.perf_counter() - start) * 1000)
        per_chunk.append((chunk, statistics.median(reads), statistics.median(parses)))
    return firsts, per_chunk


def feed(workdir: Path, bundle_dir: Path, bodies: list[bytes], symbolicate: bool) -> tuple[float, int, dict[str, Any], int]:
    """events/s of the feeder over `bodies` in a new database; the issues made, one stored event and
    the characters its row keeps of its own (0: it is kept in its envelope's outbox row)."""
    engine = db.engine(f"sqlite:///{workdir / f'feed-{uuid.uuid4().hex[:8]}.db'}")
    db.migrate(engine)
    import_bundle(engine, bundle_dir)
    store = InboxStore(engine, Symbolicator(MapLibrary(engine)) if symbolicate else None, scrubbing_of=unscrubbed)
    store.ensure_project(Dsn.parse(LOCAL_DSN))
    rate = fed_per_second(store, bodies, LOCAL_DSN)
    reader = InboxReader(engine)
    issues = IssueSearch(engine).search("is:unresolved", limit=1).total
    event_id = json.loads(bodies[1].split(b"\n")[0])["event_id"]  # its own stack, at the default share
    stored = reader.event(event_id)
    with engine.connect() as connection:
        kept = connection.execute(sqlalchemy.select(sqlalchemy.func.length(EVENTS.c.payload))
                                  .where(EVENTS.c.event_id == event_id)).scalar_one()
    engine.dispose()
    return rate, issues, stored["event"] if stored else {}, int(kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2000, help="envelopes fed per run (default 2000)")
    parser.add_argument("--runs", type=int, default=3, help="feeder runs each way, in ABBA order (default 3)")
    parser.add_argument("--own-stacks", type=float, default=0.5,
                        help="share of the fed events with a stack of their own, never seen before (default 0.5)")
    parser.add_argument("--repeat", type=int, default=2000, help="events timed per warm figure (default 2000)")
    parser.add_argument("--cold", type=int, default=5, help="cold first events, and reads and parses per chunk (default 5)")
    parser.add_argument("--chunks", type=int, default=6, help="chunks the stacks cross, the largest (default 6)")
    parser.add_argument("--bundle", type=Path, help="a bundle directory (default: the newest under .web/lookout-sourcemaps)")
    parser.add_argument("--esbuild", action="store_true", help="measure a bundle built here with esbuild instead")
    parser.add_argument("--seed", type=int, default=14, help="picks the positions (default 14)")
    args = parser.parse_args()
    per_chunk = FRAMES // args.chunks
    with tempfile.TemporaryDirectory(prefix="lookout-symbolicate-bench-") as tmp:
        workdir = Path(tmp)
        directory, manifest, which = find_build(args.bundle, args.esbuild, workdir)
        total = sum((directory / f.js).stat().st_size + (directory / f.map).stat().st_size for f in manifest.files)
        print(f"Maps: {which}, bundle {directory}\n  build {manifest.build_id}: {len(manifest.files)} chunks, "
              f"{total / 2**20:.1f} MiB of JavaScript and maps", flush=True)
        engine = db.engine(f"sqlite:///{workdir / 'maps.db'}")
        db.migrate(engine)
        start = time.perf_counter()
        import_bundle(engine, directory)
        imported_ms = (time.perf_counter() - start) * 1000
        chunks = chunks_of(directory, manifest, args.chunks, max(args.repeat, args.events) * per_chunk,
                           random.Random(args.seed))
        stacks = Stacks(chunks, per_chunk)
        print(f"  imported into SQLite in {imported_ms:.0f} ms; stacks of {stacks.frames} frames over the "
              f"{len(chunks)} largest chunks, {per_chunk} from each\n", flush=True)

        print(f"1. warm cache, {args.repeat} events each way ...", flush=True)
        warm_times, floors = warm(engine, stacks, args.repeat), lookup_floor(engine, stacks)
        print(f"2. first event of a new build, {args.cold} times ...", flush=True)
        firsts, per_map = cold(engine, stacks, args.cold)
        print(f"3. the feeder, {args.events} envelopes per run, {args.runs} runs each way ...", flush=True)
        bodies = stacks.envelopes(args.events, args.own_stacks)
        rates: dict[bool, list[float]] = {False: [], True: []}
        for symbolicate in ([False, True, True, False] * args.runs)[: 2 * args.runs]:  # neither always first
            rate, issues, stored, kept = feed(workdir, directory, bodies, symbolicate)
            rates[symbolicate].append(rate)
            where = f"its row keeps {kept / 1000:.1f} KB" if kept else "kept in its envelope"
            print(f"   {'with' if symbolicate else 'without'} symbolication: {rate:7.1f} events/s, {issues} issues; "
                  f"a stored event: {mapped(stored)} of {stacks.frames} frames mapped, "
                  f"{len(json.dumps(stored)) / 1000:.1f} KB as JSON, {where} (sent: {len(bodies[1]) / 1000:.1f} KB)",
                  flush=True)
    report(stacks.frames, warm_times, floors, firsts, per_map, rates)


def report(frames: int, warm_times: dict[str, Any], floors: list[float], firsts: list[float],
           per_map: list[tuple[Chunk, float, float]], rates: dict[bool, list[float]]) -> None:
    seen, unseen = warm_times["seen"], warm_times["unseen"]
    print(f"\n1. Warm cache, ms per {frames}-frame event ({len(seen)} events)   median     p99")
    print(f"   positions seen before (the same event)          {statistics.median(seen):8.3f} {percentile(seen, 0.99):7.3f}"
          f"   ({warm_times['mapped_same']} of {frames} frames mapped)")
    print(f"   positions never seen (a symbolic lookup each)   {statistics.median(unseen):8.3f} "
          f"{percentile(unseen, 0.99):7.3f}   ({warm_times['mapped_unseen']:.2f} of {frames} frames mapped, mean)")
    print("   symbolic's own lookup alone (no context lines), µs per frame by chunk (as in 2.): "
          + ", ".join(f"{us:.1f}" for us in floors) + f"; {sum(floors) / len(floors) * frames / 1000:.3f} ms per event")
    print(f"\n2. First event of a new build (cold: maps read from SQLite and parsed): "
          f"median {statistics.median(firsts):.1f} ms ({', '.join(f'{t:.1f}' for t in firsts)})")
    print("   chunk                                          JS+map   read ms   parse ms")
    for chunk, read_ms, parse_ms in per_map:
        print(f"   {chunk.asset_path[-45:]:<45} {chunk.size / 2**10:7.0f} KB {read_ms:8.1f} {parse_ms:9.1f}")
    without, with_ = statistics.median(rates[False]), statistics.median(rates[True])
    print(f"\n3. Feeder, events/s (median of {len(rates[True])} runs each): without {without:.1f}, with {with_:.1f}")
    print("\nSummary")
    print(f"  warm, positions never seen: median {statistics.median(unseen):.3f} ms per event   (goal ≤ {WARM_GOAL_MS} ms: "
          f"{'met' if statistics.median(unseen) <= WARM_GOAL_MS else 'NOT met'})")
    print(f"  warm, positions seen before: median {statistics.median(seen):.3f} ms per event   (not the goal's figure)")
    print(f"  first event of a new build: median {statistics.median(firsts):.1f} ms   (written down, no goal)")
    print(f"  feeder with / without symbolication: {with_ / without:.2f}×   (goal ≥ {RATE_GOAL}×: "
          f"{'met' if with_ / without >= RATE_GOAL else 'NOT met'})")


if __name__ == "__main__":
    main()
