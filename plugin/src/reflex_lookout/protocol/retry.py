"""When to try again: the delay before the next attempt of something that failed (an envelope
upstream refused for now, an alert a channel did not take)."""

from __future__ import annotations

import random
from collections.abc import Callable


def backoff(attempts: int, base: float, cap: float, rand: Callable[[], float] = random.random) -> float:
    """Exponential backoff with jitter: somewhere in [½, 1] × min(cap, base · 2^attempts)."""
    return min(cap, base * 2**attempts) * (0.5 + rand() / 2)
