"""Sentry rate limits: read them off upstream answers, and hand them back to the SDK.

Upstream says `429` with `Retry-After: <seconds>`, or (on any status) `X-Sentry-Rate-Limits:
<retry_after>:<categories>:<scope>[:<reason>[:<namespaces>]], ...`, categories `;`-separated, an empty
list meaning every category. While a category is limited for a DSN the tunnel answers envelopes of
only that category with the same headers, so the browser SDK backs off instead of piling up.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

ALL = ""  # an empty category list in the header: every category

# Envelope item type → data category, as the Sentry SDKs count them.
ITEM_CATEGORIES: dict[str, str] = {
    "event": "error",
    "transaction": "transaction",
    "span": "span",
    "otel_span": "span",
    "log": "log_item",
    "otel_log": "log_item",
    "attachment": "attachment",
    "session": "session",
    "sessions": "session",
    "client_report": "internal",
    "user_report": "default",
    "feedback": "feedback",
    "profile": "profile",
    "profile_chunk": "profile_chunk",
    "replay_event": "replay",
    "replay_recording": "replay",
    "replay_video": "replay",
    "check_in": "monitor",
    "statsd": "metric_bucket",
    "metric_buckets": "metric_bucket",
    "trace_metric": "trace_metric",
    "raw_security": "security",
    "security": "security",
}


def category_of(item_type: str) -> str:
    return ITEM_CATEGORIES.get(item_type, "default")


@dataclass
class _Limit:
    until: float
    scope: str
    reason: str


def _parse_retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: rare from Sentry, fall back to the default
    return seconds if seconds is not None and math.isfinite(seconds) and seconds >= 0 else None


@dataclass
class RateLimits:
    """Active limits per DSN and category. `clock` is injectable for tests."""

    default_retry_after: float = 60.0
    clock: Callable[[], float] = time.monotonic
    _limits: dict[str, dict[str, _Limit]] = field(default_factory=dict)

    def update(self, dsn: str, status: int, headers: Mapping[str, str]) -> bool:
        """Record the limits an upstream answer carries; returns whether it carried any."""
        now = self.clock()
        limits = self._limits.setdefault(dsn, {})
        if header := headers.get("x-sentry-rate-limits"):
            for entry in header.split(","):
                parts = entry.strip().split(":")
                seconds = _parse_retry_after(parts[0]) if parts and parts[0] else None
                if seconds is None:
                    continue
                categories = [c for c in parts[1].split(";") if c] if len(parts) > 1 else []
                scope = parts[2] if len(parts) > 2 else "organization"
                reason = parts[3] if len(parts) > 3 else ""
                for category in categories or [ALL]:
                    self._extend(limits, category, _Limit(now + seconds, scope, reason))
            return True
        if status == 429:
            seconds = _parse_retry_after(headers.get("retry-after"))
            self._extend(limits, ALL, _Limit(now + (seconds or self.default_retry_after), "key", ""))
            return True
        return False

    @staticmethod
    def _extend(limits: dict[str, _Limit], category: str, limit: _Limit) -> None:
        current = limits.get(category)
        if current is None or current.until < limit.until:
            limits[category] = limit

    def _active(self, dsn: str) -> dict[str, _Limit]:
        now = self.clock()
        limits = self._limits.get(dsn, {})
        for category in [c for c, limit in limits.items() if limit.until <= now]:
            del limits[category]
        return limits

    def retry_after(self, dsn: str, categories: Iterable[str]) -> float:
        """Seconds until every one of `categories` may be sent; 0 when one of them may be sent now.

        Client reports (`internal`) never count: an envelope of only those is always let through.
        """
        limits = self._active(dsn)
        wanted = {c for c in categories if c != "internal"}
        if not limits or not wanted:
            return 0.0
        now = self.clock()
        waits = []
        for category in wanted:
            limit = limits.get(category) or limits.get(ALL)
            if limit is None:
                return 0.0
            waits.append(limit.until - now)
        return max(waits)

    def headers(self, dsn: str) -> dict[str, str]:
        """The active limits for `dsn` as response headers for the SDK (empty when none)."""
        limits = self._active(dsn)
        if not limits:
            return {}
        now = self.clock()
        entries = [
            f"{math.ceil(limit.until - now)}:{category}:{limit.scope}" + (f":{limit.reason}" if limit.reason else "")
            for category, limit in sorted(limits.items())
        ]
        longest = max(math.ceil(limit.until - now) for limit in limits.values())
        return {"Retry-After": str(longest), "X-Sentry-Rate-Limits": ", ".join(entries)}

    def snapshot(self) -> dict[str, dict[str, float]]:
        """{dsn: {category: seconds left}} for the stats endpoint ("" = all categories)."""
        now = self.clock()
        return {
            dsn: {category or "*": round(limit.until - now, 1) for category, limit in self._active(dsn).items()}
            for dsn in list(self._limits)
            if self._active(dsn)
        }
