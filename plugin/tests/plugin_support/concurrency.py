"""For tests of "at most N at once" (how many callers were inside a block at the same time) and of
work started by several threads at once (`all_at_once`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
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


def all_at_once(call: Callable[[], object], threads: int = 4) -> list[BaseException]:
    """Run `call()` in `threads` threads released together (as workers starting at once); what they raised."""
    start = threading.Barrier(threads)
    failures: list[BaseException] = []

    def worker() -> None:
        start.wait()
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 (returned to the test)
            failures.append(exc)

    running = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in running:
        thread.start()
    for thread in running:
        thread.join()
    return failures
