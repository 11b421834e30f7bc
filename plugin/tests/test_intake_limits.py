"""Intake rates: a token bucket of bytes per minute per key, with a bounded number of keys."""

from __future__ import annotations

from plugin_support.clock import Clock
from reflex_lookout.intake_limits import Buckets


def test_a_key_may_send_until_its_minute_is_spent_then_waits_for_the_refill() -> None:
    clock = Clock()
    buckets = Buckets(600, clock=clock)  # 10 bytes a second
    assert buckets.wait("a") == 0
    buckets.spend("a", 500)
    assert buckets.wait("a") == 0  # 100 left: one more request may come in
    buckets.spend("a", 400)  # ... and overdraw by 300
    assert buckets.wait("a") == 30  # 300 bytes at 10 a second
    clock.now += 29
    assert buckets.wait("a") == 1
    clock.now += 1.5
    assert buckets.wait("a") == 0
    assert buckets.wait("b") == 0  # each key has its own


def test_a_bucket_never_holds_more_than_a_minute_and_0_means_no_limit() -> None:
    clock = Clock()
    buckets = Buckets(600, clock=clock)
    clock.now += 3600  # an idle hour saves nothing up
    buckets.spend("a", 600)
    assert buckets.wait("a") == 1
    unlimited = Buckets(0, clock=clock)
    unlimited.spend("a", 10**12)
    assert unlimited.wait("a") == 0 and len(unlimited) == 0


def test_memory_is_bounded_forgetting_the_least_recently_used_first() -> None:
    clock = Clock()
    buckets = Buckets(100, max_tracked=3, clock=clock)
    for key in "abcd":
        buckets.spend(key, 1000)
    assert len(buckets) == 3
    assert buckets.wait("a") == 0  # forgotten: a full bucket again
    assert buckets.wait("d") > 0
    clock.now += 3600
    assert buckets.wait("d") == 0 and len(buckets) == 2  # a refilled bucket is not kept
