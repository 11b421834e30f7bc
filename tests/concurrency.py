"""For tests of "at most N at once": how many callers were inside a block at the same time."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Peak:
    """`with peak.inside(hold_s):` counts a caller in for `hold_s`; `peak.most` is the most at once
    (threads included: the count is locked)."""

    def __init__(self) -> None:
        self.running = self.most = 0
        self._lock = threading.Lock()

    @contextmanager
    def inside(self, hold_s: float = 0.05) -> Iterator[None]:
        with self._lock:
            self.running += 1
            self.most = max(self.most, self.running)
        try:
            time.sleep(hold_s)
            yield
        finally:
            with self._lock:
                self.running -= 1
