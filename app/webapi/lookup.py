"""What a path of the web API names: the organization (Lookout has one: any slug names it), a project
(its slug is its name; a number is its id) and an issue (its id, or its short id `PROJECT-N`), each
bounded before it is read and `NotFound` with a sentence when there is none. Blocking: call them in
a worker thread."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

import sqlalchemy
from sqlalchemy import select

from app.inbox import activity
from app.inbox.search import IssueSearch
from app.inbox.short_ids import MAX_ISSUE_ID, parse_short_id
from app.projects.tables import PROJECTS

SLUG = re.compile(r"[A-Za-z0-9_.-]{1,100}")
NUMBER = re.compile(r"[0-9]{1,18}")  # an id in a path or a parameter (ASCII digits: int() takes others too)
MAX_NAME = 200  # characters of a project's slug or an issue's short id


class NotFound(LookupError):
    """What the path names is not there (answered 404 with the sentence)."""


class BadRequest(ValueError):
    """A parameter or body Lookout refuses (answered 400 with the sentence)."""


def organization(slug: str) -> None:
    if SLUG.fullmatch(slug) is None:
        raise NotFound(f"There is no organization {slug[:40]!r}: Lookout has one, named by any slug such as 'lookout'.")


def project(engine: sqlalchemy.Engine, slug: str) -> dict[str, Any]:
    """The project (id, name, created_at) whose name is `slug`, or whose id it is."""
    if not 0 < len(slug) <= MAX_NAME:
        raise NotFound("There is no project with so long a slug.")
    by = PROJECTS.c.id == int(slug) if NUMBER.fullmatch(slug) else PROJECTS.c.name == slug
    with engine.connect() as connection:
        row = connection.execute(select(PROJECTS.c.id, PROJECTS.c.name, PROJECTS.c.created_at).where(by)
                                 .order_by(PROJECTS.c.id).limit(1)).mappings().first()
    if row is None:
        raise NotFound(f"There is no project {slug!r} in Lookout (a project's slug is its name).")
    return dict(row)


def issue(search: IssueSearch, reference: str, project_id: int | None = None) -> dict[str, Any]:
    """The issue (as IssueSearch shows it) of an id or a short id, in `project_id` if given."""
    found = None
    if NUMBER.fullmatch(reference) and 0 < int(reference) <= MAX_ISSUE_ID:
        found = search.issue(int(reference))
    elif (parsed := parse_short_id(reference)) is not None:
        found = search.issue(parsed[1])
        if found is not None and found["short_id"].upper() != reference.strip().upper():
            found = None
    if found is None or (project_id is not None and found["project_id"] != project_id):
        raise NotFound(f"There is no issue {reference[:MAX_NAME]!r} (an issue is named by its id or its short id).")
    return found


def user_ids(engine: sqlalchemy.Engine) -> dict[str, int]:
    """Console users' ids by name (assignees are names; Sentry's clients name users by id)."""
    with engine.connect() as connection:
        return {name: user_id for user_id, name, _role in activity.users(connection)}


def assignee(engine: sqlalchemy.Engine, given: object, also: Collection[str] = ()) -> str:
    """The console user's name `assignedTo` names ("user:ID", "ID", a name; "" or null: nobody);
    `also`: the names of LOOKOUT_CONSOLE_USERS, who have no id."""
    if given is None or given == "":
        return ""
    if not isinstance(given, str) or len(given) > MAX_NAME:
        raise BadRequest("assignedTo is \"user:<id>\", a user's name, or \"\" to unassign.")
    if given.startswith("team:"):
        raise BadRequest("Lookout has no teams: assign issues to a user (\"user:<id>\").")
    wanted = given.removeprefix("user:")
    if wanted in also:
        return wanted
    with engine.connect() as connection:
        for user_id, name, _role in activity.users(connection):
            if wanted in (str(user_id), name):
                return name
    raise BadRequest(f"There is no console user {wanted!r} to assign issues to (see /api/0/organizations/ORG/members/).")
