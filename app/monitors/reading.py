"""The read side of cron monitors, for the /monitors page: each monitor (of every project, by project
then slug, at most `limit`) with its project's name, and the newest `recent` check-ins of each."""

from __future__ import annotations

from typing import Any

import sqlalchemy
from sqlalchemy import func, select

from app.monitors.tables import CHECKINS, MONITORS
from app.projects.tables import PROJECTS


def monitors(engine: sqlalchemy.Engine, limit: int = 200, recent: int = 10) -> tuple[list[dict[str, Any]],
                                                                                     list[dict[str, Any]]]:
    """(monitors, their recent check-ins: each with its `monitor_id`, newest first per monitor)."""
    listed = select(MONITORS, PROJECTS.c.name.label("project")).join(
        PROJECTS, PROJECTS.c.id == MONITORS.c.project_id).order_by(MONITORS.c.project_id, MONITORS.c.slug).limit(limit)
    with engine.connect() as connection:
        found = [dict(row) for row in connection.execute(listed).mappings()]
        ids = [row["id"] for row in found]
        if not ids:
            return [], []
        numbered = select(CHECKINS, func.row_number().over(
            partition_by=CHECKINS.c.monitor_id, order_by=CHECKINS.c.id.desc()).label("n")).where(
            CHECKINS.c.monitor_id.in_(ids)).subquery()
        newest = select(numbered).where(numbered.c.n <= recent).order_by(numbered.c.monitor_id, numbered.c.id.desc())
        checkins = [dict(row) for row in connection.execute(newest).mappings()]
    return found, checkins
