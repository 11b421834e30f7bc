"""Intake rate limits: how many bytes (as received) a client address, and a DSN, may send per minute.

Each is a token bucket holding one minute's allowance and refilled continuously. A request is let
in while its bucket is not empty and then charged what it brought, so one large request may take the
bucket below zero: the next ones wait until it has refilled (`Retry-After`). The client's bucket is
checked before the body is read; the DSN's once the header line has named it.

These protect Lookout itself (its CPU, its disk between two retention passes) and are not Sentry's
rate limits, which upstream sets (reflex_lookout/protocol/ratelimits.py). Memory is bounded: at most
`max_tracked` buckets each, the least recently used forgotten first (a forgotten bucket is full).
Counted per backend process.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from reflex_lookout.settings import MonitoringSettings

MAX_TRACKED = 10_000


class Buckets:
    """One token bucket of `per_minute` bytes per key (0: no limit)."""

    def __init__(self, per_minute: int, max_tracked: int = MAX_TRACKED,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.max_tracked = max_tracked
        self.clock = clock
        self._levels: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key → (bytes left, when)

    def wait(self, key: str) -> int:
        """Whole seconds until `key` may send again; 0 if it may now."""
        if self.per_minute <= 0:
            return 0
        level = self._level(key)
        return 0 if level > 0 else max(1, math.ceil(-level * 60 / self.per_minute))

    def spend(self, key: str, size: int) -> None:
        if self.per_minute > 0:
            self._keep(key, self._level(key) - size)

    def _level(self, key: str) -> float:
        found = self._levels.get(key)
        if found is None:
            return self.per_minute
        level = min(self.per_minute, found[0] + (self.clock() - found[1]) * self.per_minute / 60)
        self._keep(key, level)
        return level

    def _keep(self, key: str, level: float) -> None:
        self._levels.pop(key, None)
        if level < self.per_minute:  # a full bucket is the same as none: nothing to remember
            self._levels[key] = (level, self.clock())  # the most recently used last
            while len(self._levels) > self.max_tracked:
                self._levels.popitem(last=False)

    def __len__(self) -> int:
        return len(self._levels)


@dataclass
class IntakeLimits:
    client: Buckets
    key: Buckets

    @classmethod
    def from_settings(cls, settings: MonitoringSettings) -> IntakeLimits:
        return cls(Buckets(settings.ingest_bytes_per_min_per_client), Buckets(settings.ingest_bytes_per_min_per_key))
