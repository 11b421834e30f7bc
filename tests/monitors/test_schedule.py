"""app/monitors/schedule.py: monitor_config read into a schedule, and when the next check-in is due."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from app.monitors.schedule import Schedule, parse


def at(text: str, zone: str = "UTC") -> float:
    return datetime.fromisoformat(text).replace(tzinfo=ZoneInfo(zone)).timestamp()


def test_an_interval_counts_from_the_check_in() -> None:
    schedule = parse({"schedule": {"type": "interval", "value": 10, "unit": "minute"}, "checkin_margin": 5})
    assert schedule == Schedule("interval", "10", "minute", 5, 30, "UTC")
    assert schedule.next_after(1000.0) == 1600.0
    assert schedule.described() == "every 10 minutes"
    assert parse({"schedule": {"type": "interval", "value": 1, "unit": "day"}}).next_after(0.0) == 86400.0


def test_a_crontab_is_read_in_its_timezone() -> None:
    schedule = parse({"schedule": {"type": "crontab", "value": "0  3 * * *"}, "timezone": "Europe/Berlin",
                      "max_runtime": 90})
    assert (schedule.value, schedule.max_runtime_min, schedule.checkin_margin_min) == ("0 3 * * *", 90, 1)
    assert schedule.next_after(at("2026-11-29T02:59:00", "Europe/Berlin")) == at("2026-11-29T03:00:00", "Europe/Berlin")
    assert schedule.next_after(at("2026-11-29T03:00:00", "Europe/Berlin")) == at("2026-11-30T03:00:00", "Europe/Berlin")
    every_five = parse({"schedule": {"type": "crontab", "value": "*/5 * * * *"}})
    assert every_five.next_after(at("2026-11-29T07:16:06")) == at("2026-11-29T07:20:00")
    assert every_five.described() == "*/5 * * * * (UTC)"
    assert datetime.fromtimestamp(every_five.next_after(0.0) or 0, UTC).minute == 5


@pytest.mark.parametrize("config", [
    None, [], {}, {"schedule": {"type": "crontab", "value": "every day"}},
    {"schedule": {"type": "crontab", "value": "61 * * * *"}},
    {"schedule": {"type": "interval", "value": 0, "unit": "minute"}},
    {"schedule": {"type": "interval", "value": 5, "unit": "fortnight"}},
    {"schedule": {"type": "interval", "value": True, "unit": "minute"}},
    {"schedule": {"type": "interval", "value": 5, "unit": "minute"}, "timezone": "Mars/Olympus"},
    {"schedule": {"type": "interval", "value": 5, "unit": "minute"}, "checkin_margin": -1},
    {"schedule": {"type": "interval", "value": 5, "unit": "minute"}, "max_runtime": 1e9},
])
def test_what_is_not_a_schedule_is_refused_with_a_sentence(config: object) -> None:
    with pytest.raises(ValueError, match=r"\w"):
        parse(config)


def test_no_schedule_is_never_due() -> None:
    assert Schedule().next_after(1.0) is None and Schedule().described() == "none"
