"""The releases the inbox knows of: the versions its events named (the `release` tag of the tag
index), each with when it was first and last seen, in how many issues and which projects. Lookout
keeps no release records of its own (no commits, no deploys): this is what Sentry's releases list
shows of them (app/webapi)."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import func, select

from app.inbox.tables import ISSUE_TAGS, ISSUES

MAX_RELEASES = 100


@dataclass(frozen=True)
class Release:
    version: str
    first_seen: float
    last_seen: float
    issues: int
    project_ids: tuple[int, ...]


def seen(engine: sqlalchemy.Engine, project_id: int | None = None, containing: str = "",
         limit: int = MAX_RELEASES) -> list[Release]:
    """The releases seen (in `project_id`, whose version contains `containing`), last seen first."""
    tags = ISSUE_TAGS
    where = [tags.c.key == "release"]
    if project_id is not None:
        where.append(ISSUES.c.project_id == project_id)
    if containing:
        where.append(func.lower(tags.c.value).contains(containing.lower(), autoescape=True))
    joined = tags.join(ISSUES, ISSUES.c.id == tags.c.issue_id)
    with engine.connect() as connection:
        rows = connection.execute(
            select(tags.c.value, func.min(tags.c.first_seen), func.max(tags.c.last_seen),
                   func.count(func.distinct(tags.c.issue_id)))
            .select_from(joined).where(*where).group_by(tags.c.value)
            .order_by(func.max(tags.c.last_seen).desc(), tags.c.value).limit(min(max(1, limit), MAX_RELEASES))
        ).tuples().all()
        versions = [row[0] for row in rows]
        projects: dict[str, set[int]] = {}
        if versions:
            for value, of_project in connection.execute(
                    select(tags.c.value, ISSUES.c.project_id).select_from(joined)
                    .where(tags.c.key == "release", tags.c.value.in_(versions)).distinct()):
                projects.setdefault(value, set()).add(int(of_project))
    return [Release(value, float(first), float(last), int(issues), tuple(sorted(projects.get(value, ()))))
            for value, first, last, issues in rows]
