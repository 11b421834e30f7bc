"""The alert benchmark's results (bench/alert_latency.py): one outcome per peer and pattern, and the
printed table, message timelines, goal and ratios."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

GOAL_MEDIAN_S = 1.0


@dataclass(frozen=True)
class Outcome:
    peer: str
    label: str
    pattern: str
    issues: int
    refused: list[str]
    from_acceptance: list[float]  # seconds, one per matched alert
    from_sent: list[float]
    timeline: list[tuple[float, int]]  # per message: s after the first acceptance, alerts it lists

    @property
    def messages(self) -> int:
        return len(self.timeline)

    @property
    def alerts_listed(self) -> int:
        return sum(count for _, count in self.timeline)


def rank(values: list[float], q: float) -> float:
    """The nearest-rank percentile of `values` (q in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def median(values: list[float]) -> float:
    return statistics.median(values) if values else math.nan


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.0f}" if not math.isnan(seconds) else f"{'-':>8}"


def print_table(outcomes: list[Outcome]) -> None:
    print(f"\n{'pattern':<8}{'peer':<20}{'arrived':>9}{'median':>8}{'p90':>8}{'p99':>8}{'max':>8}"
          f"{'msgs':>6}{'alerts/msg':>11}   from the request's start: median, p99")
    print("-" * 122)
    for o in outcomes:
        values = o.from_acceptance
        per_message = o.alerts_listed / o.messages if o.messages else 0.0
        print(f"{o.pattern:<8}{o.label:<20}{len(values):>5}/{o.issues:<3}{ms(median(values))}"
              f"{ms(rank(values, 0.9))}{ms(rank(values, 0.99))}{ms(max(values, default=math.nan))}"
              f"{o.messages:>6}{per_message:>11.1f}   {ms(median(o.from_sent))}, {ms(rank(o.from_sent, 0.99)).strip()}")
        if o.refused:
            print(f"        {len(o.refused)} events refused, first: {o.refused[0]}")
    print("ms from the event's acceptance (its 200 answer) to the alert's arrival; arrived: alerts matched by title")


def print_timelines(outcomes: list[Outcome], shown: int = 10) -> None:
    """When each message came (s after the first acceptance) and how many alerts it listed."""
    print("\nMessages as they came: s after the first acceptance × alerts listed")
    for o in outcomes:
        if o.peer.startswith("lookout"):
            parts = [f"{at:.2f}×{count}" for at, count in o.timeline[:shown]]
            more = f" … ({o.messages - shown} more)" if o.messages > shown else ""
            print(f"  {o.pattern:<7}{o.label:<20}{' '.join(parts)}{more}")


def print_ratios(outcomes: list[Outcome]) -> None:
    """Per pattern: the goal (Lookout as shipped), then each Lookout row against each Bugsink row."""
    for pattern in ("spaced", "burst"):
        rows = [o for o in outcomes if o.pattern == pattern and o.from_acceptance]
        ours = [o for o in rows if o.peer.startswith("lookout")]
        if not ours:
            continue
        print()
        for o in ours:
            mid = median(o.from_acceptance)
            verdict = "met" if mid <= GOAL_MEDIAN_S and len(o.from_acceptance) == o.issues else "NOT met"
            shipped = "" if o.peer == "lookout" else ", not as shipped"
            print(f"{pattern}: {o.label} median {mid * 1000:.0f} ms (goal ≤ {GOAL_MEDIAN_S * 1000:.0f} ms: "
                  f"{verdict}{shipped})")
        for o in ours:
            for theirs in (t for t in rows if t.peer.startswith("bugsink")):
                a, b = median(o.from_acceptance), median(theirs.from_acceptance)
                s, t = median(o.from_sent), median(theirs.from_sent)
                accepted = (f"{a * 1000:.0f} / {b * 1000:.0f} ms = {a / b:.3g}×" if b > 0
                            else f"{a * 1000:.0f} / {b * 1000:.0f} ms (theirs arrives before the answer)")
                print(f"  {o.label} / {theirs.label}: from acceptance {accepted}; "
                      f"from the request's start {s * 1000:.0f} / {t * 1000:.0f} ms = {s / t:.3g}×")
