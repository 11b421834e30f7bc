"""Tunnel counters, kept in memory per process and served as JSON with the outbox depth."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class TunnelStats:
    accepted: int = 0
    local: int = 0  # accepted in local mode: kept for the embedded inbox, never forwarded
    forwarded: int = 0
    retrying: int = 0  # delivery attempts that failed and will be retried
    rate_limited: int = 0  # envelopes answered 429 because upstream limits their categories
    rejected: Counter[str] = field(default_factory=Counter)  # by reason, e.g. "forbidden_dsn"
    dropped: Counter[str] = field(default_factory=Counter)  # refused for good by upstream, by status

    def reject(self, reason: str) -> None:
        self.rejected[reason] += 1

    def as_dict(self) -> dict[str, object]:
        return {
            "accepted": self.accepted,
            "local": self.local,
            "forwarded": self.forwarded,
            "retrying": self.retrying,
            "rate_limited": self.rate_limited,
            "rejected": dict(self.rejected),
            "rejected_total": sum(self.rejected.values()),
            "dropped": dict(self.dropped),
            "dropped_total": sum(self.dropped.values()),
        }
