"""A project's alert rules: which of new issue, regression and spike alert, what a spike is, and the
quiet period (a row of `alert_rules`; a project without one has the table's defaults).

    new issue    an issue's first event
    regression   an event reopens a resolved issue
    spike        more than `spike_events` events of one issue within `spike_minutes`

An issue alerts at most once per `quiet_minutes` per rule (a spike: once per its window, when that is
longer). app/alerts/triggers.py applies the rules as each event is stored, through `cached`: a
primary-key read per stored event cost a fifth of a small event's ingest, so each process keeps a
project's rules for CACHE_S seconds (a change made in another worker applies within that time).
"""

from __future__ import annotations

import time
import weakref
from dataclasses import asdict, dataclass
from typing import Any

import sqlalchemy
from sqlalchemy import select
from sqlalchemy.dialects import postgresql, sqlite

from app.alerts.models import AlertRules
from app.alerts.tables import RULES
from app.protocol.fields import whole

TABLE = RULES
# Each number's bounds: a spike of 1..1,000,000 events within a minute..a day; quiet up to a week.
BOUNDS = {"spike_events": (1, 1_000_000), "spike_minutes": (1, 1440), "quiet_minutes": (0, 10080)}
SWITCHES = ("new_issue", "regression", "spike")
# The longest any rule looks back for an earlier alert: max(spike_minutes, quiet_minutes) at most.
LONGEST_LOOK_BACK_MINUTES = max(BOUNDS["spike_minutes"][1], BOUNDS["quiet_minutes"][1])
CACHE_S = 5.0
# Per database (engine), per project: (when read, monotonic seconds; the rules then).
_cache: weakref.WeakKeyDictionary[sqlalchemy.Engine, dict[int, tuple[float, Rules]]] = weakref.WeakKeyDictionary()


def _default(name: str) -> Any:
    """The `alert_rules` column's default (app/models.py): the one place defaults are written."""
    return AlertRules.model_fields[name].default


@dataclass(frozen=True)
class Rules:
    new_issue: bool = _default("new_issue")
    regression: bool = _default("regression")
    spike: bool = _default("spike")
    spike_events: int = _default("spike_events")
    spike_minutes: int = _default("spike_minutes")
    quiet_minutes: int = _default("quiet_minutes")

    def checked(self) -> Rules:
        """These rules, or ValueError with a sentence naming what is out of bounds."""
        for name in SWITCHES:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"The rule {name} must be on or off (true or false).")
        for name, (low, high) in BOUNDS.items():
            value = getattr(self, name)
            if not whole(value) or not low <= value <= high:
                raise ValueError(f"{name} must be a whole number from {low:,} to {high:,}.")
        return self


READ = select(*(TABLE.c[name] for name in (*SWITCHES, *BOUNDS))).where(
    TABLE.c.project_id == sqlalchemy.bindparam("project_id"))


def read(connection: sqlalchemy.Connection, project_id: int) -> Rules:
    """The project's rules (the defaults when it has no row)."""
    row = connection.execute(READ, {"project_id": project_id}).mappings().first()
    return Rules() if row is None else Rules(**row)


def cached(connection: sqlalchemy.Connection, project_id: int) -> Rules:
    """The project's rules as this process read them at most CACHE_S seconds ago (the ingest path's)."""
    now = time.monotonic()
    known = _cache.setdefault(connection.engine, {})
    found = known.get(project_id)
    if found is None or now - found[0] > CACHE_S:
        found = known[project_id] = (now, read(connection, project_id))
    return found[1]


def save(connection: sqlalchemy.Connection, project_id: int, rules: Rules) -> None:
    """Store the project's rules (ValueError when out of bounds, see `Rules.checked`)."""
    values = asdict(rules.checked())
    dialect = sqlite if connection.dialect.name == "sqlite" else postgresql
    statement = dialect.insert(TABLE).values(project_id=project_id, **values)
    connection.execute(statement.on_conflict_do_update(index_elements=[TABLE.c.project_id], set_=values))
    _cache.get(connection.engine, {}).pop(project_id, None)  # this process sees the change at once
