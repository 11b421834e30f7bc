"""The ingest side of cron monitors: a `check_in` item (sentry-sdk's `capture_checkin` and
`@monitor`), written in the store's transaction (app/ingest/envelope_writer.py).

    {"check_in_id": "…", "monitor_slug": "nightly", "status": "in_progress" | "ok" | "error",
     "duration": 1.5, "environment": "…", "release": "…", "contexts": {"trace": {"trace_id": "…"}},
     "monitor_config": {"schedule": {…}, "checkin_margin": 5, "max_runtime": 30, "timezone": "UTC"}}

A check-in finds its monitor by project and slug, created when new (with no schedule when it gives no
`monitor_config`; at most MAX_MONITORS per project: a new slug past that is dropped); a config that
parses (app/monitors/schedule.py) replaces the monitor's schedule. An ok or error check-in with the
`check_in_id` of an earlier in_progress one updates that row. Each check-in sets when the next one is
expected (from when its run started, or from the slot it started a little early for: `slot_of`) and
an ok or error one the monitor's state (states.py). A monitor keeps its newest CHECKINS_KEPT check-ins.
"""

from __future__ import annotations

import math
from typing import Any

import sqlalchemy
from sqlalchemy import bindparam, delete, func, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite

from app.monitors import states
from app.monitors.schedule import SLUG_LENGTH, Schedule, parse
from app.monitors.tables import CHECKINS, MONITORS
from app.protocol.fields import cut, mapping

MAX_MONITORS = 1000  # per project
EARLY_S = 60.0  # a run that starts at most this much before its slot is that slot's (`slot_of`)
CHECKINS_KEPT = 500  # per monitor, the newest
STATUSES = ("in_progress", "ok", "error")
ENVIRONMENT_LENGTH, RELEASE_LENGTH, ID_LENGTH = 64, 200, 64

MONITOR = select(MONITORS).where(MONITORS.c.project_id == bindparam("project_id"), MONITORS.c.slug == bindparam("slug"))
COUNT_MONITORS = select(func.count()).select_from(MONITORS).where(MONITORS.c.project_id == bindparam("project_id"))
SAME_CHECKIN = select(CHECKINS.c.id, CHECKINS.c.started_at).where(
    CHECKINS.c.monitor_id == bindparam("monitor_id"), CHECKINS.c.check_in_id == bindparam("check_in_id")
).order_by(CHECKINS.c.id.desc()).limit(1)


def slot_of(schedule: Schedule, started_at: float, expected_at: float | None) -> float:
    """The time a new run started at `started_at` is counted for: the slot expected next when it
    started a little before it (a cron daemon or a clock ahead: at most EARLY_S, and at most a tenth
    of the schedule's period), so the next slot is the one after that and not the slot the run already
    filled; else when it started."""
    if expected_at is None or not started_at < expected_at:
        return started_at
    following = schedule.next_after(expected_at)
    early = min(EARLY_S, (following - expected_at) / 10) if following is not None else 0.0
    return expected_at if expected_at - early <= started_at else started_at


def write_checkin(connection: sqlalchemy.Connection, project_id: int, payload: dict[str, Any],
                  received_at: float) -> bool:
    """Store one check-in; whether it was kept (not: no slug, an unknown status, too many monitors)."""
    slug = " ".join(cut(payload.get("monitor_slug"), SLUG_LENGTH).split())
    status = payload.get("status")
    if not slug or status not in STATUSES:
        return False
    schedule: Schedule | None = None
    if payload.get("monitor_config") is not None:
        try:
            schedule = parse(payload["monitor_config"])
        except ValueError:
            schedule = None  # the monitor keeps the schedule it has
    monitor = _monitor(connection, project_id, slug, schedule, received_at)
    if monitor is None:
        return False
    duration = payload.get("duration")
    duration = float(duration) if isinstance(duration, (int, float)) and not isinstance(duration, bool) \
        and math.isfinite(duration) and duration >= 0 else None
    check_in_id = cut(payload.get("check_in_id"), ID_LENGTH)
    environment = cut(payload.get("environment"), ENVIRONMENT_LENGTH)
    release = cut(payload.get("release"), RELEASE_LENGTH)
    trace_id = cut(mapping(mapping(payload.get("contexts")).get("trace")).get("trace_id"), 32)
    earlier = connection.execute(SAME_CHECKIN, {"monitor_id": monitor.id, "check_in_id": check_in_id}).first() \
        if check_in_id else None
    values = {"status": status, "duration": duration, "received_at": received_at, "environment": environment,
              "release": release, "trace_id": trace_id}
    if earlier is not None:
        started_at = earlier.started_at
        connection.execute(update(CHECKINS).where(CHECKINS.c.id == earlier.id).values(**values))
    else:
        started_at = received_at - (duration or 0.0) if status != "in_progress" else received_at
        connection.execute(insert(CHECKINS).values(monitor_id=monitor.id, check_in_id=check_in_id,
                                                   started_at=started_at, **values))
        keep_newest(connection, monitor.id)
    # A new run sets when the next is expected; the end of a run (its in_progress known) leaves what its
    # start set, unless it brings a schedule (which may be new) or none was expected.
    if earlier is not None and schedule is None and monitor.next_expected_at is not None:
        expected = monitor.next_expected_at
    else:
        current = states.schedule_of(monitor)
        expected = current.next_after(slot_of(current, started_at, None if earlier is not None else monitor.next_expected_at))
    connection.execute(update(MONITORS).where(MONITORS.c.id == monitor.id).values(
        last_checkin_at=received_at, next_expected_at=expected))
    if status != "in_progress":
        states.change(connection, project_id, monitor, status, received_at,
                      started_at if status == "error" else received_at, environment=environment, release=release)
    return True


def _monitor(connection: sqlalchemy.Connection, project_id: int, slug: str, schedule: Schedule | None,
             now: float) -> Any:
    """The monitor's row (created when new, its schedule replaced when given), or None: too many."""
    monitor = connection.execute(MONITOR, {"project_id": project_id, "slug": slug}).first()
    if monitor is None:
        if connection.execute(COUNT_MONITORS, {"project_id": project_id}).scalar_one() >= MAX_MONITORS:
            return None
        dialect = sqlite if connection.dialect.name == "sqlite" else postgresql
        # A parallel feeder may create it first (PostgreSQL): then this one uses that row.
        connection.execute(dialect.insert(MONITORS).values(
            project_id=project_id, slug=slug, name=slug, state="new", created_at=now,
            **_schedule_values(schedule or Schedule())).on_conflict_do_nothing(
            index_elements=[MONITORS.c.project_id, MONITORS.c.slug]))
        return connection.execute(MONITOR, {"project_id": project_id, "slug": slug}).one()
    if schedule is not None and states.schedule_of(monitor) != schedule:
        connection.execute(update(MONITORS).where(MONITORS.c.id == monitor.id).values(**_schedule_values(schedule)))
        monitor = connection.execute(MONITOR, {"project_id": project_id, "slug": slug}).one()
    return monitor


def _schedule_values(schedule: Schedule) -> dict[str, Any]:
    return {"schedule_type": schedule.type, "schedule_value": schedule.value, "schedule_unit": schedule.unit,
            "checkin_margin_min": schedule.checkin_margin_min, "max_runtime_min": schedule.max_runtime_min,
            "timezone": schedule.timezone}


def keep_newest(connection: sqlalchemy.Connection, monitor_id: int, kept: int = CHECKINS_KEPT) -> None:
    """Delete the monitor's check-ins older than its newest `kept`."""
    cutoff = connection.execute(select(CHECKINS.c.id).where(CHECKINS.c.monitor_id == monitor_id)
                                .order_by(CHECKINS.c.id.desc()).offset(kept).limit(1)).scalar()
    if cutoff is not None:
        connection.execute(delete(CHECKINS).where(CHECKINS.c.monitor_id == monitor_id, CHECKINS.c.id <= cutoff))
