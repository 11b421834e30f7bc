"""What symbolicating one event may still use (`Budget`: frames, map lookups, bytes of maps to
parse, CPU time, the dev servers it may read), and the errors of its frames not mapped, each reason
made once per event (`frame_error`). app/sourcemaps/symbolicate.py spends it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from app.sourcemaps.event_patch import error_spec
from app.sourcemaps.map_cache import Entry
from app.sourcemaps.positions import Spec


@dataclass
class Budget:
    """What one event may still use: frames to map, lookups past the cache (by key), bytes of maps
    to parse and the thread's CPU time; once `spent` says why, its other frames stay as sent."""
    frames: int
    max_lookups: int
    by_path: bool  # whether a frame without a debug ID may be matched by its asset path
    project_id: int  # the event's: debug IDs are looked up among its maps
    bytes_left: int
    cpu_until: float  # of time.thread_time()
    dev_servers: tuple[str, ...] = ()  # the project's: the origins a module may be read from
    # Of time.perf_counter(): before it, the CPU time cannot be spent (a thread's CPU time grows no
    # faster than the clock), so the thread's clock, a system call, is read only past it.
    wall_until: float = float("inf")
    spent: str = ""
    lookups: set[tuple[str, str]] = field(default_factory=set)
    # The map found for each (debug ID, path) of this event: a stack's frames share a few files.
    found: dict[tuple[str, str], tuple[Entry, str] | str] = field(default_factory=dict)
    errors: dict[str, Spec] = field(default_factory=dict)  # why frames were not mapped, as `frame_error` made them


def frame_error(reason: str, budget: Budget) -> Spec:
    """A frame not mapped, and why (the same reason's made once per event: a file's frames share it)."""
    found = budget.errors.get(reason)
    if found is None:
        spec = error_spec(reason)
        found = budget.errors[reason] = (spec, json.dumps(spec))
    return found
