"""Retention of sessions (app/inbox/retention.py runs it with the inbox's other caps): none started
before the age cap, and at most `cap` rows per project.

Over the cap, a project's oldest rows are first folded, not dropped: they become one aggregate row
per release, environment and hour, without users, so the release's session counts and crash-free
sessions stay exact; only its users from those sessions are no longer counted. What is still over
the cap after that (aggregate rows: one per minute and user) goes oldest first.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import delete, func, select

from app.releases.session_writer import upsert_group
from app.releases.tables import SESSIONS
from app.tables import chunks

HOUR = 3600.0
COUNTS = ("sessions", "errored", "abnormal", "crashed")


@dataclass
class Kept:
    expired: int = 0  # rows started before the age cap
    folded: int = 0  # rows folded into hourly ones
    dropped: int = 0  # rows over the cap even so


def keep_sessions(connection: sqlalchemy.Connection, cutoff: float, cap: int) -> Kept:
    """Apply the age cap (`cutoff`, epoch seconds) and the per-project row cap."""
    kept = Kept(expired=connection.execute(delete(SESSIONS).where(SESSIONS.c.started < cutoff)).rowcount or 0)
    counts = connection.execute(select(SESSIONS.c.project_id, func.count()).group_by(SESSIONS.c.project_id)).all()
    for project_id, count in counts:
        if count > cap:
            kept.folded += _fold(connection, int(project_id), count - cap)
            kept.dropped += _drop(connection, int(project_id), cap)
    return kept


def _oldest(project_id: int, limit: int) -> sqlalchemy.Select:
    return (select(SESSIONS).where(SESSIONS.c.project_id == project_id)
            .order_by(SESSIONS.c.started, SESSIONS.c.id).limit(limit))


def _fold(connection: sqlalchemy.Connection, project_id: int, excess: int) -> int:
    """Fold the project's `excess` oldest rows (and as many more as it takes to make room for the
    hourly rows they become) into hourly rows without users; how many were folded."""
    rows = connection.execute(_oldest(project_id, excess * 2).where(~SESSIONS.c.key.like("h:%"))).mappings().all()
    if not rows:
        return 0
    hours: dict[tuple[str, str, float], dict[str, float]] = {}
    for row in rows:
        hour = row["started"] - row["started"] % HOUR
        into = hours.setdefault((row["release"], row["environment"], hour), dict.fromkeys(COUNTS, 0))
        for name in COUNTS:
            into[name] += row[name]
        into["updated_at"] = max(into.get("updated_at", 0.0), row["updated_at"])
    for chunk in chunks([row["id"] for row in rows]):
        connection.execute(delete(SESSIONS).where(SESSIONS.c.id.in_(chunk)))
    for (release, environment, hour), figures in hours.items():
        upsert_group(connection, {"project_id": project_id, "release": release, "environment": environment,
                                  "key": f"h:{int(hour)}", "did": "", "started": hour, **figures})
    return len(rows)


def _drop(connection: sqlalchemy.Connection, project_id: int, cap: int) -> int:
    count = connection.execute(select(func.count()).where(SESSIONS.c.project_id == project_id)).scalar_one()
    if count <= cap:
        return 0
    ids = connection.execute(select(SESSIONS.c.id).where(SESSIONS.c.project_id == project_id)
                             .order_by(SESSIONS.c.started, SESSIONS.c.id).limit(count - cap)).scalars().all()
    for chunk in chunks(list(ids)):
        connection.execute(delete(SESSIONS).where(SESSIONS.c.id.in_(chunk)))
    return len(ids)
