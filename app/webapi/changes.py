"""A PUT's body (one issue's, or a bulk update's) as Lookout's triage actions (app/inbox/bulk.py):

    status resolved                       → resolve
    status resolvedInNextRelease, or resolved with statusDetails.inNextRelease → resolve in the next release
    status unresolved                     → unresolve (a regressed issue is unresolved already)
    status ignored | muted                → ignore: for good; for snoozeDuration / ignoreDuration minutes;
                                            or until ignoreCount more events (ignoreWindow is not kept).
                                            Sentry ignores a resolved issue too: Lookout's states go
                                            resolved → unresolved → ignored, so `apply` reopens it first
    assignedTo "user:ID" | name | "" | null → assign (or unassign)
    merge 1                               → merge (bulk only)

An issue the change does not apply to (already resolved, say) is left as it is, never an error, as
in Sentry. Keys Lookout has no use for (hasSeen, isBookmarked, isSubscribed, substatus) are ignored;
ignoreUserCount and a team assignee are refused (400).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy

from app.inbox import states
from app.inbox.bulk import Action
from app.inbox.tables import ISSUES
from app.inbox.triage import Triage
from app.protocol.fields import whole
from app.tables import chunks
from app.webapi import lookup
from app.webapi.lookup import BadRequest

MAX_MINUTES = 10 * 365 * 24 * 60
MAX_COUNT = 10**9
RESOLVE_KINDS = {"resolved": "resolve", "resolvedInNextRelease": "resolve_next_release", "unresolved": "unresolve"}
IGNORE_WORDS = ("ignored", "muted")


@dataclass(frozen=True)
class Changes:
    actions: list[Action] = field(default_factory=list)
    merge: bool = False
    echo: dict[str, Any] = field(default_factory=dict)  # what Sentry answers a bulk update with


def read(engine: sqlalchemy.Engine, body: dict[str, Any], also: Collection[str] = ()) -> Changes:
    """The actions `body` asks for; `BadRequest` for one Lookout cannot do. Blocking (it reads users);
    `also`: assignees beside the console's users (lookup.assignee)."""
    actions: list[Action] = []
    echo: dict[str, Any] = {}
    given_details = body.get("statusDetails")
    details: dict[str, Any] = given_details if isinstance(given_details, dict) else {}
    status = body.get("status")
    if status is not None:
        if not isinstance(status, str):
            raise BadRequest("status is one of resolved, resolvedInNextRelease, unresolved, ignored, muted.")
        if status == "resolved" and details.get("inNextRelease") is True:
            status = "resolvedInNextRelease"
        if status in RESOLVE_KINDS:
            actions.append(Action(RESOLVE_KINDS[status]))
        elif status in IGNORE_WORDS:
            actions.append(_ignore(body, details))
        else:
            raise BadRequest(f"Lookout cannot set the status {status[:40]!r}: use resolved, resolvedInNextRelease, "
                             "unresolved, ignored or muted.")
        echo.update(status="resolved" if status == "resolvedInNextRelease" else
                    "ignored" if status == "muted" else status, statusDetails=details)
    if "assignedTo" in body:
        name = lookup.assignee(engine, body["assignedTo"], also)
        actions.append(Action("assign", assignee=name))
        echo["assignedTo"] = {"type": "user", "name": name} if name else None
    merge = body.get("merge") in (1, True, "1", "true")
    if merge and actions:
        raise BadRequest("A merge is asked alone, with no status or assignee beside it.")
    return Changes(actions, merge, echo)


def apply(triage: Triage, asked: Changes, ids: list[int], actor: str) -> None:
    """Make the changes to the issues `ids` (not a merge), a chunk at a time (app/inbox/bulk.py). Blocking."""
    for action in asked.actions:
        if action.kind == "ignore":
            triage.bulk(Action("unresolve"), resolved(triage.engine, ids), actor)
        triage.bulk(action, ids, actor)


def resolved(engine: sqlalchemy.Engine, ids: list[int]) -> list[int]:
    """Those of `ids` that are resolved now."""
    found: list[int] = []
    with engine.connect() as connection:
        for chunk in chunks(ids):
            found += connection.execute(sqlalchemy.select(ISSUES.c.id).where(
                ISSUES.c.id.in_(chunk), ISSUES.c.status == states.RESOLVED)).scalars()
    return found


def _ignore(body: dict[str, Any], details: dict[str, Any]) -> Action:
    def given(name: str, most: int) -> int | None:
        value = body.get(name, details.get(name))
        if value is None:
            return None
        if not whole(value) or not 0 < value <= most:
            raise BadRequest(f"{name} is a whole number from 1 to {most:,}.")
        return value

    if given("ignoreUserCount", MAX_COUNT) is not None:
        raise BadRequest("Lookout cannot ignore an issue until a number of users: ignore it for a time or a count of events.")
    minutes = given("ignoreDuration", MAX_MINUTES) or given("snoozeDuration", MAX_MINUTES)
    count = given("ignoreCount", MAX_COUNT)
    return Action("ignore", for_s=minutes * 60.0 if minutes else None, more_events=count)
