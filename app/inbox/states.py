"""Issue states and their changes, each recorded with its time and actor.

    unresolved ──resolve──▶ resolved ──a new event──▶ regressed (open again)
        │   ▲                  │ reopen                   │ resolve / ignore
        │   └──────────────────┘                          ▼
        └──ignore──▶ ignored ──unignore──▶ unresolved

"Resolve in the next release" remembers the newest release the issue was seen in: only an event
of another release regresses it (events of the release it was resolved in are expected still).
"""

from __future__ import annotations

import time

import sqlalchemy
from sqlalchemy import insert, select, update

from app.inbox.models import InboxEvent, InboxIssue, InboxIssueChange
from app.tables import table_of

UNRESOLVED, RESOLVED, IGNORED, REGRESSED = "unresolved", "resolved", "ignored", "regressed"
OPEN = (UNRESOLVED, REGRESSED)
ALLOWED: dict[str, tuple[str, ...]] = {
    UNRESOLVED: (RESOLVED, IGNORED),
    REGRESSED: (RESOLVED, IGNORED),
    RESOLVED: (UNRESOLVED,),
    IGNORED: (UNRESOLVED,),
}
SYSTEM = "system"
ISSUES = table_of(InboxIssue)
EVENTS = table_of(InboxEvent)
CHANGES = table_of(InboxIssueChange)


class StateError(ValueError):
    """A change the issue's current state does not allow, or an unknown issue."""


def change(connection: sqlalchemy.Connection, issue_id: int, to_status: str, actor: str,
           in_next_release: bool = False) -> str:
    """Move the issue to `to_status` (by `actor`); the status it had. `StateError` if not allowed."""
    current = connection.execute(select(ISSUES.c.status).where(ISSUES.c.id == issue_id)).scalar()
    if current is None:
        raise StateError(f"There is no issue {issue_id}.")
    if to_status not in ALLOWED.get(current, ()):
        raise StateError(f"An issue that is {current} cannot become {to_status}.")
    release = ""
    if to_status == RESOLVED and in_next_release:
        release = connection.execute(
            select(EVENTS.c.release).where(EVENTS.c.issue_id == issue_id, EVENTS.c.release != "")
            .order_by(EVENTS.c.id.desc()).limit(1)
        ).scalar() or ""
    connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(
        status=to_status, resolved_in_release=release, ignored_until=None, ignored_until_count=None))
    note = f"in the release after {release}" if release else ""
    _record(connection, issue_id, actor, current, to_status, note)
    return current


def after_new_event(connection: sqlalchemy.Connection, issue_id: int, status: str, resolved_in_release: str,
                    release: str, event_id: str) -> bool:
    """A new event of a resolved issue regresses it (unless it is of the release it was resolved in);
    whether it did."""
    if status != RESOLVED or (resolved_in_release and release in ("", resolved_in_release)):
        return False
    connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(status=REGRESSED, resolved_in_release=""))
    _record(connection, issue_id, SYSTEM, RESOLVED, REGRESSED, f"event {event_id}" + (f" in {release}" if release else ""))
    return True


def ignore(connection: sqlalchemy.Connection, issue_id: int, actor: str, for_s: float | None = None,
           more_events: int | None = None, now: float | None = None) -> str:
    """Ignore the issue for good, for `for_s` seconds, or until `more_events` more events came; the
    status it had. `StateError` if it cannot be ignored now."""
    before = change(connection, issue_id, IGNORED, actor)
    count = connection.execute(select(ISSUES.c.event_count).where(ISSUES.c.id == issue_id)).scalar_one()
    until = None if for_s is None else (time.time() if now is None else now) + for_s
    connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(
        ignored_until=until, ignored_until_count=None if more_events is None else count + more_events))
    return before


def after_ignored_event(connection: sqlalchemy.Connection, issue_id: int, status: str, until: float | None,
                        until_count: int | None, received_at: float, event_count: int) -> bool:
    """A new event of an issue ignored for a time (past) or until a count (reached) makes it
    unresolved again; whether it did."""
    if status != IGNORED or not ((until is not None and received_at >= until)
                                 or (until_count is not None and event_count >= until_count)):
        return False
    connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(
        status=UNRESOLVED, ignored_until=None, ignored_until_count=None))
    _record(connection, issue_id, SYSTEM, IGNORED, UNRESOLVED, "the ignore ran out")
    return True


def ignore_ends(connection: sqlalchemy.Connection, issue_ids: list[int]) -> dict[int, tuple[float | None, int | None]]:
    """When each ignored issue of `issue_ids` comes back, if it does: (at this time, at this event count)."""
    if not issue_ids:
        return {}
    rows = connection.execute(select(ISSUES.c.id, ISSUES.c.ignored_until, ISSUES.c.ignored_until_count).where(
        ISSUES.c.id.in_(issue_ids), ISSUES.c.status == IGNORED)).all()
    return {issue_id: (until, count) for issue_id, until, count in rows}


def history(connection: sqlalchemy.Connection, issue_id: int) -> list[dict[str, object]]:
    rows = connection.execute(
        select(CHANGES.c.at, CHANGES.c.actor, CHANGES.c.from_status, CHANGES.c.to_status, CHANGES.c.note)
        .where(CHANGES.c.issue_id == issue_id).order_by(CHANGES.c.id)
    ).mappings().all()
    return [dict(row) for row in rows]


def _record(connection: sqlalchemy.Connection, issue_id: int, actor: str, before: str, after: str, note: str) -> None:
    connection.execute(insert(CHANGES).values(
        issue_id=issue_id, at=time.time(), actor=actor, from_status=before, to_status=after, note=note,
    ))
