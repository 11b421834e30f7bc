"""A monitor's state and its changes: each change is written with its alert, in one transaction.

    new ──ok──▶ ok ◀──ok (recovered)── missed | error | timeout
    any ──error check-in──▶ error          (ingest: app/monitors/checkins.py)
    any ──no check-in by next_expected_at + checkin_margin──▶ missed   (the watcher: watcher.py)
    any ──an in_progress run older than max_runtime──▶ timeout        (the watcher)

A change alerts every channel of the project (app/alerts/triggers.py, `monitor_alert`): missed, failed
(error), timeout, and recovered (ok after one of those). new → ok and a state kept do not alert.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy
from sqlalchemy import update

from app.alerts.messages import monitor_reason, monitor_title
from app.alerts.triggers import monitor_alert
from app.monitors.schedule import Schedule
from app.monitors.tables import MONITORS

STATES = ("new", "ok", "missed", "error", "timeout")
BAD = ("missed", "error", "timeout")
RULE_OF = {"missed": "missed", "error": "failed", "timeout": "timeout"}


def schedule_of(monitor: Any) -> Schedule:
    """The schedule a monitor's row keeps."""
    return Schedule(monitor.schedule_type, monitor.schedule_value, monitor.schedule_unit,
                    monitor.checkin_margin_min, monitor.max_runtime_min, monitor.timezone)


def change(connection: sqlalchemy.Connection, project_id: int, monitor: Any, state: str, now: float, at: float,
           detail: str = "", environment: str = "", release: str = "") -> bool:
    """Move `monitor` (its row as read in this transaction) to `state`, with its alert when one is due;
    whether it changed (not when another writer changed it first). `at`: the moment the alert names."""
    if monitor.state == state:
        return False
    changed = connection.execute(update(MONITORS).where(MONITORS.c.id == monitor.id, MONITORS.c.state == monitor.state)
                                 .values(state=state, last_state_change_at=now)).rowcount
    if changed != 1:
        return False
    rule = RULE_OF.get(state) or ("recovered" if state == "ok" and monitor.state in BAD else None)
    if rule is not None:
        if rule == "recovered":
            detail = f", after it was {monitor.state}"
        monitor_alert(connection, project_id, monitor.id, rule, monitor_reason(rule, monitor.slug, at, detail),
                      monitor_title(monitor.slug, "timed out" if state == "timeout" else state),
                      schedule_of(monitor).described(), environment, release, now, monitor.created_at,
                      monitor.last_checkin_at or monitor.created_at)
    return True
