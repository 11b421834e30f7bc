"""Symbolication at ingest: a browser event's minified stack frames become the original ones.

`Symbolicator(lookup).symbolicate(event)` runs where the inbox reads an envelope, before grouping
(app/ingest/envelope_reader.py: in the feeder's worker thread, outside the write transaction): CPU
work and map lookups only. For each stack trace (of each exception, and of each thread), each frame
that is JavaScript from a URL (`abs_path` or `filename` with an http, https, file or app scheme, a
`lineno` and a `colno`: mappable_frames.py) is mapped:

- its map is the one of the debug ID the event names for that URL (`debug_meta.images`, type
  `sourcemap`, `code_file` = the URL), among the maps of the event's project (uploaded with
  sentry-cli, app/sourcemaps/uploads.py; for the app's own project, its builds too), else the one
  served at the URL's path (scheme, host, query and fragment ignored) that has no other debug ID —
  for the app's own events only; else, when the URL's origin is one of the project's dev servers
  (`dev_servers`, app/projects/sourcemap_options.py), the inline map of the module that dev server
  serves at that path (app/sourcemaps/module_reader.py's `ModuleReader`, with its bounds: an origin
  the project does not list is never asked, one off loopback neither);
- with symbolic's `SourceMapCache` (app/sourcemaps/map_cache.py keeps them parsed, bounded):
  `filename` and `abs_path` become the original source's project-relative path
  (app/sourcemaps/source_paths.py), `function` the enclosing scope's name (else the token's name;
  none when the map has neither: the minified one says nothing), `lineno`, `colno`, `in_app` by the
  path, five lines of context each side for the app's own code and the innermost frame (each cut at
  200 characters; app/sourcemaps/positions.py says why not all), `data.sourcemap` =
  {debug_id, build_id, resolved_with: "debug_id" | "asset_path"}, and `data.python_page` when the
  source is a module generated from a Python page (`StoredMap.pages`); `module` goes (it named the
  minified file).
- a frame that cannot be mapped keeps its fields and gets `data.sourcemap_error`, a sentence: no map
  for the debug ID, no map for the file, the position outside the map (a line past its end, or a
  column past the end of the line in the served file), the map unreadable (symbolic's reason, or
  over the bounds of app/sourcemaps/map_bounds.py), the event's budget spent, a dev server not read
  (`NotRead`: not waited for, skipped after a timeout, off loopback).

The stack trace as sent is kept as `raw_stacktrace` (Sentry's name) when a frame was mapped.
`symbolicated` also gives what it changed, as the patch the store keeps beside the event as sent
(event_patch.py, whose `apply_stack` changes the frames here and when the event is read back).
Bounds: at most MAX_FRAMES frames per event are looked at, innermost first (the rest stay as sent), at most
MAX_LOOKUPS maps looked up per event past the cache (frames needing more say so). A budget per event (event_budget.py):
`max_bytes` of maps (file and map) parsed past the cache, and `max_cpu_ms` of the thread's CPU time
(`time.thread_time`: the machine is shared, wall time would count other processes' work). A parse is
one uninterruptible call, so the bytes are checked before it and the time before each frame (the
thread's clock, a system call, read only once the wall clock says the budget could be spent); past
either, the event's remaining frames stay as sent, each saying why, and the event is stored so: one
costly event costs at most its budget (and one parse), and the feeder goes on with the others.
Waiting for dev servers (this app's own in dev mode, a project's listed ones) costs no CPU, so it has
a budget of its own in wall time: `max_wait_ms` per event in all (`event_wait`), within the reader's
bounds per request and per origin; past it a frame that needs a dev server says so, and the others
are mapped as usual.

A lookup that fails because the database is away (or locked) raises: the feeder keeps the whole
batch and tries it again later (`its_own_fault`), so the event is symbolicated once the maps can
be read, and nothing is lost. Any other failure of a lookup is that frame's error.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit

from app.ingest.incoming import its_own_fault
from app.projects.sourcemap_options import origin_of
from app.settings import LOCAL_PROJECT_ID, SETTINGS
from app.sourcemaps.event_budget import Budget, frame_error
from app.sourcemaps.event_patch import FramesPatch, apply_stack, holders, mapped_spec
from app.sourcemaps.map_cache import Entry, MapCache, ParsedMap, Unreadable, fingerprint, parse
from app.sourcemaps.mappable_frames import MAX_URL, frames_of, images_of, position_of
from app.sourcemaps.maps import MapLookup, StoredMap
from app.sourcemaps.module_reader import ModuleReader, NotRead, event_wait
from app.sourcemaps.positions import Positions, Spec

logger = logging.getLogger(__name__)
MAX_FRAMES = 250
MAX_LOOKUPS = 20
MAX_WAIT_MS = 2000  # of an event's waiting for dev servers


class Symbolicator:
    """Safe to share between threads: the caches lock themselves, each event has its own budget."""

    def __init__(self, lookup: MapLookup, cache: MapCache | None = None,
                 max_frames: int = MAX_FRAMES, max_lookups: int = MAX_LOOKUPS,
                 max_bytes: int = SETTINGS.symbolicate_max_bytes, max_cpu_ms: int = SETTINGS.symbolicate_max_cpu_ms,
                 modules: ModuleReader | None = None, max_wait_ms: int = MAX_WAIT_MS) -> None:
        """`modules`: reads the projects' dev servers (made when first needed by default).
        `max_wait_ms`: how long one event may wait for dev servers, in all."""
        self.lookup = lookup
        self._module_reader, self._module_lock = modules, threading.Lock()
        self.cache = cache if cache is not None else MapCache()
        self.positions = Positions()
        self.max_frames, self.max_lookups = max_frames, max_lookups
        self.max_bytes, self.max_cpu_ms, self.max_wait_ms = max_bytes, max_cpu_ms, max_wait_ms

    def symbolicate(self, event: dict[str, Any], by_path: bool = True, project_id: int = LOCAL_PROJECT_ID,
                    dev_servers: tuple[str, ...] = ()) -> bool:
        """Map the event's JavaScript frames in place; whether anything changed. `by_path`: a frame
        whose file has no debug ID may be matched by its URL's path, which names a file of this
        app's own builds: only for the app's own events (another app's `/assets/index.js` is not ours).
        `project_id`: the event's project, whose maps its debug IDs name. `dev_servers`: the
        project's, the origins (as `origin_of` spells them) whose modules may be read."""
        return self.symbolicated(event, by_path, project_id, dev_servers) is not None

    def symbolicated(self, event: dict[str, Any], by_path: bool = True, project_id: int = LOCAL_PROJECT_ID,
                     dev_servers: tuple[str, ...] = ()) -> FramesPatch | None:
        """`symbolicate`, and what it changed, as the patch the store keeps beside the event as sent
        (app/sourcemaps/event_patch.py); None when nothing changed."""
        stacks = [(key, index, holder) for key, index, holder in holders(event) if frames_of(holder)]
        if not stacks:
            return None
        budget = Budget(self.max_frames, self.max_lookups, by_path, project_id, self.max_bytes,
                        time.thread_time() + self.max_cpu_ms / 1000, dev_servers,
                        time.perf_counter() + self.max_cpu_ms / 1000)
        images = images_of(event)
        patch = FramesPatch()
        with event_wait(self.max_wait_ms / 1000):
            for key, index, holder in stacks:
                specs: list[Spec | None] = [None] * len(holder["stacktrace"]["frames"])
                if self._map_stack(holder, images, budget, patch, specs):
                    apply_stack(holder, [s[0] if s else None for s in specs], patch.maps)  # as a kept patch is applied
                    patch.add(key, index, [s[1] if s else None for s in specs])
        return patch if patch.stacks else None

    def _map_stack(self, holder: dict[str, Any], images: dict[str, str], budget: Budget, patch: FramesPatch,
                   specs: list[Spec | None]) -> bool:
        """What becomes of each frame of the stack, into `specs` (None: left as sent); whether any changes."""
        frames = holder["stacktrace"]["frames"]
        changed = False
        for index in range(len(frames) - 1, -1, -1):  # innermost first: those matter most
            if budget.frames <= 0:
                break
            frame = frames[index]
            where = position_of(frame)
            if where is None:
                continue
            budget.frames -= 1
            first = budget.frames == self.max_frames - 1  # the event's first frame is always tried
            if not budget.spent and not first and time.perf_counter() > budget.wall_until:
                left = budget.cpu_until - time.thread_time()
                if left < 0:
                    budget.spent = (f"Not mapped: symbolicating this event took more than its {self.max_cpu_ms} ms "
                                    "of CPU (LOOKOUT_SYMBOLICATE_MAX_CPU_MS).")
                budget.wall_until = time.perf_counter() + left
            if budget.spent:
                specs[index], changed = frame_error(budget.spent, budget), True
                continue
            url, line, column = where
            innermost = index == len(frames) - 1
            specs[index] = self._map_frame(url, line, column, images.get(url, ""), budget, innermost, patch)
            changed = True
        return changed

    def _map_frame(self, url: str, line: int, column: int, debug_id: str, budget: Budget, innermost: bool,
                   patch: FramesPatch) -> Spec:
        found = budget.found.get((debug_id, url))
        if found is None:
            found = budget.found[(debug_id, url)] = self._find_map(debug_id, url, budget)
        if isinstance(found, str):
            return frame_error(found, budget)
        entry, resolved_with = found
        if isinstance(entry, Unreadable):
            return frame_error(f"The source map of {entry.asset_path} is unreadable: {entry.message}", budget)
        original = self.positions.original(entry, line, column, context=innermost)
        if isinstance(original, str):
            return frame_error(original, budget)
        map_index = patch.map_index(entry.debug_id, entry.build_id, resolved_with)
        spec = original.specs.get(map_index)
        if spec is None:  # made once per position and map index (and written once as JSON)
            spec = original.specs[map_index] = mapped_spec(
                original.path, original.function, original.line, original.column, original.in_app, map_index,
                original.python_page,
                (original.pre_context, original.context_line, original.post_context) if original.has_context else None)
        return spec

    def _find_map(self, debug_id: str, url: str, budget: Budget) -> tuple[Entry, str] | str:
        """The map for a frame of `url` and how it was found, or why there is none."""
        path = unquote(urlsplit(url).path)[:MAX_URL]
        if debug_id:
            # Keyed by project too: one project never gets another's map from the cache.
            found = self._entry(("debug_id", f"{budget.project_id}:{debug_id}"),
                                lambda: self.lookup.by_debug_id(debug_id, budget.project_id), budget)
            if found is not None:
                return found if isinstance(found, str) else (found, "debug_id")
        if budget.by_path and path:  # the app's own builds first (its dev server too, with its pages)
            found = self._entry(("asset_path", path), lambda: self.lookup.by_asset_path(path), budget)
            if isinstance(found, str):
                return found
            if found is not None and (not debug_id or found.debug_id in ("", debug_id)):  # not another build's file
                return found, "asset_path"
        origin = origin_of(url) if budget.dev_servers else None
        if origin is not None and origin in budget.dev_servers and path:
            module = self._entry(("dev_module", origin + path), lambda: self._modules().read(origin, path), budget)
            if isinstance(module, str):
                return module
            if module is not None:
                return module, "asset_path"
            return f"No source map: the dev server {origin} serves no module with an inline map at {path}."
        if debug_id:
            return f"No source map has the debug ID {debug_id}."
        return f"No source map for {path or 'this file'}." if budget.by_path else \
            "No source map: the event names no debug ID for this file."

    def _modules(self) -> ModuleReader:
        with self._module_lock:
            if self._module_reader is None:
                self._module_reader = ModuleReader()
            return self._module_reader

    def _entry(self, key: tuple[str, str], fetch: Callable[[], StoredMap | None], budget: Budget) -> Entry | str | None:
        """The cached entry for `key`, else what the lookup gives (parsed and cached); None when
        there is no such map; a sentence when it could not be looked up."""
        now = time.monotonic()
        cached = self.cache.get(key, now)
        if cached is not None:
            return cached
        if self.cache.missing(key, now):
            return None
        if key not in budget.lookups and len(budget.lookups) >= budget.max_lookups:
            return f"Not looked up: this event needs more than {budget.max_lookups} source maps."
        budget.lookups.add(key)
        try:
            stored = fetch()
        except NotRead as exc:  # a dev server not asked or not waited for: not a miss, a later event may read it
            return str(exc)
        except Exception as exc:
            if not its_own_fault(exc):
                raise  # the database is away: the feeder tries the batch again
            logger.warning("source map lookup for %s failed: %r", key, exc)
            return f"The source map could not be looked up: {type(exc).__name__}: {str(exc)[:200]}"
        if stored is None:
            self.cache.miss(key, now)
            return None
        entry = self._parsed(key, stored, budget)
        if not isinstance(entry, str):
            self.cache.put(key, entry, now)
        return entry

    def _parsed(self, key: tuple[str, str], stored: StoredMap, budget: Budget) -> Entry | str:
        """The map parsed (or reused), or why this event may not parse it (its bytes are spent)."""
        previous = self.cache.stale(key)
        if previous is not None and previous.digest == fingerprint(stored):
            return previous  # an asset path looked up again, and the same bytes
        size = len(stored.source) + len(stored.sourcemap)
        if budget.bytes_left < size <= self.max_bytes:  # a larger map is no event's: parse() refuses it
            budget.spent = (f"Not mapped: this event's source maps come to more than the {self.max_bytes} bytes "
                            "it may load (LOOKOUT_SYMBOLICATE_MAX_BYTES).")
            return budget.spent
        entry = parse(stored, self.max_bytes)
        if isinstance(entry, ParsedMap):  # a map refused before parsing spends nothing, and is kept so
            budget.bytes_left -= size
        if isinstance(entry, Unreadable):
            logger.warning("source map of %s (debug ID %r, build %r) is unreadable: %s",
                           stored.asset_path, stored.debug_id, stored.build_id, entry.message)
        return entry
