"""A monitor's schedule as sentry-sdk's `monitor_config` gives it, and when its next check-in is due.

    {"schedule": {"type": "crontab", "value": "*/5 * * * *"}, "timezone": "Europe/Berlin", ...}
    {"schedule": {"type": "interval", "value": 10, "unit": "minute"}, "checkin_margin": 5, "max_runtime": 30}

A crontab is read by cronsim (five fields, in the monitor's timezone: zoneinfo; DST as cron does); an
interval counts from the last check-in (a month is 30 days and a year 365, as Sentry's are fixed
lengths too). `parse` refuses what it cannot read with ValueError; a check-in's config that does not
parse leaves the monitor's stored schedule as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from app.protocol.fields import whole

UNITS_S = {"minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400, "month": 30 * 86400, "year": 365 * 86400}
DEFAULT_MARGIN_MIN = 1  # Sentry's default checkin_margin
DEFAULT_MAX_RUNTIME_MIN = 30  # Sentry's default max_runtime
MAX_MINUTES = 40_320  # 28 days: the most a margin or a runtime may be
VALUE_LENGTH = 100
SLUG_LENGTH = 128


@dataclass(frozen=True)
class Schedule:
    type: str = ""  # crontab, interval, or "" (none: never missed)
    value: str = ""
    unit: str = ""
    checkin_margin_min: int = DEFAULT_MARGIN_MIN
    max_runtime_min: int = DEFAULT_MAX_RUNTIME_MIN
    timezone: str = "UTC"

    def next_after(self, at: float) -> float | None:
        """When the next check-in is expected after one at `at` (epoch seconds); None: no schedule."""
        if self.type == "interval":
            return at + int(self.value) * UNITS_S[self.unit]
        if self.type == "crontab":
            start = datetime.fromtimestamp(at, ZoneInfo(self.timezone))
            return next(CronSim(self.value, start)).timestamp()
        return None

    def described(self) -> str:
        """The schedule for people: "*/5 * * * * (UTC)", "every 10 minutes", "none"."""
        if self.type == "interval":
            count = int(self.value)
            return f"every {self.unit}" if count == 1 else f"every {count} {self.unit}s"
        if self.type == "crontab":
            return f"{self.value} ({self.timezone})"
        return "none"


def _minutes(config: dict[str, Any], key: str, default: int) -> int:
    value = config.get(key)
    if value is None:
        return default
    if not whole(value) or not 0 <= value <= MAX_MINUTES:
        raise ValueError(f"{key} must be a whole number of minutes from 0 to {MAX_MINUTES:,}.")
    return int(value)


def parse(config: Any) -> Schedule:
    """The schedule of a `monitor_config`, or ValueError naming what is wrong with it."""
    if not isinstance(config, dict):
        raise ValueError("monitor_config must be an object.")
    timezone = config.get("timezone") or "UTC"
    if not isinstance(timezone, str) or len(timezone) > 64:
        raise ValueError("timezone must be a time zone's name.")
    try:
        ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"Unknown timezone {timezone[:64]!r}.") from None
    margin = _minutes(config, "checkin_margin", DEFAULT_MARGIN_MIN)
    runtime = _minutes(config, "max_runtime", DEFAULT_MAX_RUNTIME_MIN)
    schedule = config.get("schedule")
    if not isinstance(schedule, dict):
        raise ValueError("monitor_config.schedule must be an object.")
    kind, value = schedule.get("type"), schedule.get("value")
    if kind == "crontab":
        if not isinstance(value, str) or len(value) > VALUE_LENGTH:
            raise ValueError("A crontab schedule's value must be a crontab string.")
        value = " ".join(value.split())
        try:
            next(CronSim(value, datetime.now(UTC)))
        except (CronSimError, StopIteration):
            raise ValueError(f"Not a crontab: {value!r}.") from None
        return Schedule("crontab", value, "", margin, runtime, timezone)
    if kind == "interval":
        unit = schedule.get("unit")
        if unit not in UNITS_S:
            raise ValueError(f"An interval's unit must be one of {', '.join(UNITS_S)}.")
        if not whole(value) or not 1 <= value <= 10_000:
            raise ValueError("An interval's value must be a whole number from 1 to 10,000.")
        return Schedule("interval", str(int(value)), str(unit), margin, runtime, timezone)
    raise ValueError("monitor_config.schedule.type must be crontab or interval.")
