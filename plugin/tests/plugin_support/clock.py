"""A clock a test sets by hand (`clock.now += 60`), for what reads the time through a callable."""

from __future__ import annotations


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now
