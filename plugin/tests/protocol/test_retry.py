"""The delay before trying again."""

from __future__ import annotations

from reflex_lookout.protocol.retry import backoff


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    assert backoff(0, 1, 300, rand=lambda: 0) == 0.5
    assert backoff(0, 1, 300, rand=lambda: 1) == 1
    assert backoff(3, 1, 300, rand=lambda: 1) == 8
    assert backoff(30, 1, 300, rand=lambda: 1) == 300
