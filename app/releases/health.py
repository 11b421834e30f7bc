"""The read side of release health, for the /releases page and Sentry's web API: per project and
release, its sessions and how they ended, crash-free sessions and users, adoption, when it was first
and last seen, and the issues it was first seen in; and one release's sessions over time.

Counted as Sentry counts them: crash-free sessions = 1 - crashed / started; crash-free users = 1 -
users with a crashed session / users (by `did`: sessions without one count no user); adoption = the
release's share of its project's sessions started in the last 24 hours. A figure with nothing to
divide by is None (shown as "—"), never 100 %.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import sqlalchemy
from sqlalchemy import func, select

from app.inbox.tables import ISSUE_TAGS, ISSUES
from app.projects.tables import PROJECTS
from app.releases.tables import SESSIONS

DAY = 86400.0
MAX_RELEASES = 100
PERIODS = {"24h": (DAY, 3600.0), "14d": (14 * DAY, DAY)}  # period → (span, bucket), in seconds
STATUSES = ("healthy", "errored", "abnormal", "crashed")


@dataclass(frozen=True)
class ReleaseHealth:
    project_id: int
    project: str
    version: str
    sessions: int
    errored: int  # ended errored (not abnormal, not crashed)
    abnormal: int
    crashed: int
    users: int
    crashed_users: int
    sessions_24h: int
    project_sessions_24h: int
    users_24h: int
    project_users_24h: int
    first_seen: float | None
    last_seen: float | None
    new_issues: int

    @property
    def healthy(self) -> int:
        return max(0, self.sessions - self.errored - self.abnormal - self.crashed)

    @property
    def crash_free_sessions(self) -> float | None:
        return _free(self.crashed, self.sessions)

    @property
    def crash_free_users(self) -> float | None:
        return _free(self.crashed_users, self.users)

    @property
    def adoption(self) -> float | None:
        """Of the project's sessions started in the last 24 h, the share of this release's (Sentry's
        `sessionsAdoption`)."""
        return 100.0 * self.sessions_24h / self.project_sessions_24h if self.project_sessions_24h else None

    @property
    def users_adoption(self) -> float | None:
        """The same of users (Sentry's `adoption`)."""
        return 100.0 * self.users_24h / self.project_users_24h if self.project_users_24h else None


def _free(crashed: int, total: int) -> float | None:
    return max(0.0, 100.0 * (1 - crashed / total)) if total else None


def releases(engine: sqlalchemy.Engine, project_id: int | None = None, version: str | None = None,
             now: float | None = None, limit: int = MAX_RELEASES, containing: str = "") -> list[ReleaseHealth]:
    """Every release (of `project_id`; only `version`; whose version contains `containing`, in any
    case) that sessions or events named, last seen first."""
    now = time.time() if now is None else now
    since = now - DAY
    recent = SESSIONS.c.started >= since
    where = _where(SESSIONS.c.project_id, SESSIONS.c.release, project_id, version, containing)
    day = func.sum(sqlalchemy.case((recent, SESSIONS.c.sessions), else_=0))
    crashed_did = sqlalchemy.case((SESSIONS.c.crashed > 0, SESSIONS.c.did), else_=None)
    recent_did = sqlalchemy.case((recent, SESSIONS.c.did), else_=None)
    sessions = (select(SESSIONS.c.project_id, SESSIONS.c.release, func.sum(SESSIONS.c.sessions),
                       func.sum(SESSIONS.c.errored), func.sum(SESSIONS.c.abnormal), func.sum(SESSIONS.c.crashed),
                       _users(SESSIONS.c.did), _users(crashed_did), day, _users(recent_did),
                       func.min(SESSIONS.c.started), func.max(SESSIONS.c.updated_at))
                .where(*where).group_by(SESSIONS.c.project_id, SESSIONS.c.release))
    tagged = ISSUE_TAGS.join(ISSUES, ISSUES.c.id == ISSUE_TAGS.c.issue_id)
    new = func.sum(sqlalchemy.case((ISSUE_TAGS.c.first_seen <= ISSUES.c.first_seen, 1), else_=0))
    events = (select(ISSUES.c.project_id, ISSUE_TAGS.c.value, func.min(ISSUE_TAGS.c.first_seen),
                     func.max(ISSUE_TAGS.c.last_seen), new)
              .select_from(tagged).where(ISSUE_TAGS.c.key == "release",
                                         *_where(ISSUES.c.project_id, ISSUE_TAGS.c.value, project_id, version,
                                                 containing))
              .group_by(ISSUES.c.project_id, ISSUE_TAGS.c.value))
    per_project = (select(SESSIONS.c.project_id, func.sum(SESSIONS.c.sessions), _users(SESSIONS.c.did))
                   .where(recent).group_by(SESSIONS.c.project_id))
    with engine.connect() as connection:
        found: dict[tuple[int, str], dict[str, Any]] = {}
        for pid, release, *figures in connection.execute(sessions):
            found[(int(pid), release)] = dict(zip(
                ("sessions", "errored", "abnormal", "crashed", "users", "crashed_users", "sessions_24h",
                 "users_24h", "first_seen", "last_seen"), figures, strict=True))
        for pid, release, first, last, new_issues in connection.execute(events):
            row = found.setdefault((int(pid), release), {})
            row["first_seen"] = _least(row.get("first_seen"), first)
            row["last_seen"] = _most(row.get("last_seen"), last)
            row["new_issues"] = int(new_issues or 0)
        totals = {int(pid): (int(count or 0), int(users or 0)) for pid, count, users in connection.execute(per_project)}
        names = dict(connection.execute(select(PROJECTS.c.id, PROJECTS.c.name)).tuples().all())
    listed = [ReleaseHealth(
        project_id=pid, project=str(names.get(pid, pid)), version=release,
        sessions=_int(row, "sessions"), errored=_int(row, "errored"), abnormal=_int(row, "abnormal"),
        crashed=_int(row, "crashed"), users=_int(row, "users"), crashed_users=_int(row, "crashed_users"),
        sessions_24h=_int(row, "sessions_24h"), project_sessions_24h=totals.get(pid, (0, 0))[0],
        users_24h=_int(row, "users_24h"), project_users_24h=totals.get(pid, (0, 0))[1],
        first_seen=row.get("first_seen"), last_seen=row.get("last_seen"), new_issues=_int(row, "new_issues"),
    ) for (pid, release), row in found.items()]
    listed.sort(key=lambda r: (-(r.last_seen or 0.0), r.project, r.version))
    return listed[:max(1, min(limit, MAX_RELEASES))]


def by_status(engine: sqlalchemy.Engine) -> dict[str, int]:
    """Every project's sessions by how they ended (STATUSES), summed over releases (the home page)."""
    query = select(func.sum(SESSIONS.c.sessions), func.sum(SESSIONS.c.errored), func.sum(SESSIONS.c.abnormal),
                   func.sum(SESSIONS.c.crashed))
    with engine.connect() as connection:
        started, errored, abnormal, crashed = (int(n or 0) for n in connection.execute(query).one())
    return {"healthy": max(0, started - errored - abnormal - crashed), "errored": errored, "abnormal": abnormal,
            "crashed": crashed}


def series(engine: sqlalchemy.Engine, project_id: int, version: str, period: str = "14d",
           now: float | None = None) -> list[dict[str, Any]]:
    """The release's sessions by when they started, one row per hour (24h) or day (14d), oldest first:
    {"start": epoch seconds, "healthy", "errored", "abnormal", "crashed"}; empty buckets too."""
    span, bucket = PERIODS.get(period, PERIODS["14d"])
    now = time.time() if now is None else now
    first = (now - span) - (now - span) % bucket + bucket
    slot = func.floor((SESSIONS.c.started - first) / bucket)
    query = (select(slot, func.sum(SESSIONS.c.sessions), func.sum(SESSIONS.c.errored),
                    func.sum(SESSIONS.c.abnormal), func.sum(SESSIONS.c.crashed))
             .where(SESSIONS.c.project_id == project_id, SESSIONS.c.release == version, SESSIONS.c.started >= first)
             .group_by(slot))
    count = int((now - first) // bucket) + 1
    rows = [{"start": first + i * bucket, **dict.fromkeys(STATUSES, 0)} for i in range(count)]
    with engine.connect() as connection:
        for index, started, errored, abnormal, crashed in connection.execute(query):
            if index is None or not 0 <= int(index) < count:
                continue
            errored, abnormal, crashed = int(errored or 0), int(abnormal or 0), int(crashed or 0)
            row = rows[int(index)]
            row.update(healthy=max(0, int(started or 0) - errored - abnormal - crashed), errored=errored,
                       abnormal=abnormal, crashed=crashed)
    return rows


def _users(did: Any) -> Any:
    """How many distinct users `did` names (sessions without one name none)."""
    return func.count(func.distinct(func.nullif(did, "")))


def _where(project: Any, release: Any, project_id: int | None, version: str | None, containing: str) -> list[Any]:
    where = [] if project_id is None else [project == project_id]
    if version is not None:
        where.append(release == version)
    if containing:
        where.append(func.lower(release).contains(containing.lower(), autoescape=True))
    return where


def _int(row: dict[str, Any], name: str) -> int:
    return int(row.get(name) or 0)


def _least(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def _most(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else max(a, b)
