"""Who works on an issue and what they said: its assignee, comments, and the timeline that shows every
change of it (status, assignment, merge, unmerge, comment) with who and when.

Each function runs on the caller's connection (its transaction). Refusals are `states.StateError`
with a sentence the console can show as it is. A comment is deleted by emptying it, so the timeline
still shows where it was ("(deleted)"); each comment is also recorded in the issue's history
(`kind="comment"`, its first 80 characters), which outlives an edit or a delete.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import insert, select, update

from app import db
from app.console.models import ConsoleUser
from app.inbox.states import CHANGES, StateError
from app.inbox.tables import COMMENTS, ISSUES
from app.tables import table_of

USERS = table_of(ConsoleUser)
STATUS, ASSIGNED, MERGED, UNMERGED, COMMENT = "status", "assigned", "merged", "unmerged", "comment"
MAX_COMMENT = 10_000  # characters, once stripped
NOTE_LENGTH = 80  # of a comment, in the history
TIMELINE = 500  # entries shown: the latest


@dataclass(frozen=True)
class Entry:
    """One line of an issue's timeline. A comment's `body` is its current text ("" once deleted)."""

    at: float
    actor: str
    kind: str  # status, assigned, merged, unmerged or comment
    text: str  # "resolved", "assigned to ada", "merged #12, #14 into this issue", "commented"
    comment_id: int | None = None
    body: str = ""


def status_of(connection: sqlalchemy.Connection, issue_id: int) -> str:
    """The issue's status; `StateError` if there is no such issue."""
    found = connection.execute(select(ISSUES.c.status).where(ISSUES.c.id == issue_id)).scalar()
    if found is None:
        raise StateError(f"There is no issue {issue_id}.")
    return str(found)


def record(connection: sqlalchemy.Connection, issue_id: int, actor: str, kind: str, note: str) -> None:
    """A history entry that is no change of status: it keeps the status the issue has (from = to)."""
    status = status_of(connection, issue_id)
    connection.execute(insert(CHANGES).values(
        issue_id=issue_id, at=time.time(), actor=actor, from_status=status, to_status=status, note=note, kind=kind))


def assignable(connection: sqlalchemy.Connection, also: Collection[str] = ()) -> list[str]:
    """The names an issue may be assigned to: the console users, and `also` (users from the
    environment, LOOKOUT_CONSOLE_USERS, who have no row)."""
    return sorted(set(connection.execute(select(USERS.c.name)).scalars()) | set(also))


def users(connection: sqlalchemy.Connection) -> list[tuple[int, str, str]]:
    """The console users (id, name, role), by id: who the web API lists as members and assigns by id."""
    return [(int(i), name, role) for i, name, role in
            connection.execute(select(USERS.c.id, USERS.c.name, USERS.c.role).order_by(USERS.c.id)).tuples()]


def check_assignee(connection: sqlalchemy.Connection, assignee: str, also: Collection[str] = ()) -> None:
    """`StateError` unless `assignee` is "" (nobody) or a user an issue may be assigned to."""
    if assignee and assignee not in also and connection.execute(
            select(USERS.c.id).where(USERS.c.name == assignee)).first() is None:
        raise StateError(f"There is no console user {assignee!r} to assign issues to.")


def assign(connection: sqlalchemy.Connection, issue_id: int, assignee: str, actor: str, also: Collection[str] = ()) -> None:
    """Assign the issue to `assignee` ("": unassign it); `also`: as in `assignable`."""
    assignee = assignee.strip()
    current = connection.execute(select(ISSUES.c.assignee).where(ISSUES.c.id == issue_id)).scalar()
    if current is None:
        raise StateError(f"There is no issue {issue_id}.")
    check_assignee(connection, assignee, also)
    if assignee == current:
        raise StateError(f"Issue {issue_id} is already assigned to {assignee}." if assignee
                         else f"Issue {issue_id} is assigned to nobody already.")
    connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(assignee=assignee))
    record(connection, issue_id, actor, ASSIGNED, f"to {assignee}" if assignee else "unassigned")


def add_comment(connection: sqlalchemy.Connection, issue_id: int, author: str, body: str) -> int:
    """Add `author`'s comment to the issue; its id."""
    text = _comment(body)
    status_of(connection, issue_id)
    comment_id = db.inserted_id(connection.execute(insert(COMMENTS).values(
        issue_id=issue_id, author=author, body=text, created_at=time.time(), edited_at=None)))
    record(connection, issue_id, author, COMMENT, " ".join(text.split())[:NOTE_LENGTH])
    return comment_id


def edit_comment(connection: sqlalchemy.Connection, comment_id: int, author: str, body: str) -> None:
    text = _comment(body)
    _own(connection, comment_id, author)
    connection.execute(update(COMMENTS).where(COMMENTS.c.id == comment_id).values(body=text, edited_at=time.time()))


def delete_comment(connection: sqlalchemy.Connection, comment_id: int, author: str) -> None:
    _own(connection, comment_id, author)
    connection.execute(update(COMMENTS).where(COMMENTS.c.id == comment_id).values(body="", edited_at=time.time()))


def timeline(connection: sqlalchemy.Connection, issue_id: int) -> list[Entry]:
    """The issue's history and comments, oldest first: the latest TIMELINE of them. Ordered by time,
    as the changes of issues merged into this one came from elsewhere."""
    changes = connection.execute(
        select(CHANGES.c.at, CHANGES.c.actor, CHANGES.c.kind, CHANGES.c.to_status, CHANGES.c.note)
        .where(CHANGES.c.issue_id == issue_id, CHANGES.c.kind != COMMENT).order_by(CHANGES.c.id.desc()).limit(TIMELINE)
    ).all()
    comments = connection.execute(
        select(COMMENTS.c.id, COMMENTS.c.created_at, COMMENTS.c.author, COMMENTS.c.body)
        .where(COMMENTS.c.issue_id == issue_id).order_by(COMMENTS.c.id.desc()).limit(TIMELINE)
    ).all()
    entries = [Entry(at, actor, kind, _sentence(kind, to_status, note)) for at, actor, kind, to_status, note in changes]
    entries += [Entry(at, author, COMMENT, "commented", comment_id, body) for comment_id, at, author, body in comments]
    return sorted(entries, key=lambda entry: entry.at)[-TIMELINE:]


def _sentence(kind: str, to_status: str, note: str) -> str:
    """What a history entry says, as the timeline shows it."""
    if kind == ASSIGNED:
        return f"assigned {note}" if note.startswith("to ") else note
    if kind == MERGED:
        return f"merged {note} into this issue"
    if kind == UNMERGED:
        return f"unmerged {note}"
    if not note:
        return to_status
    # "resolved in the release after 1.2"; "regressed (event 3f2a… in 1.3)", "unresolved (the ignore ran out)"
    return f"{to_status} {note}" if note.startswith("in ") else f"{to_status} ({note})"


def _comment(body: str) -> str:
    text = body.strip()
    if not 0 < len(text) <= MAX_COMMENT:
        raise StateError(f"A comment holds 1 to {MAX_COMMENT:,} characters; this one has {len(text):,}.")
    return text


def _own(connection: sqlalchemy.Connection, comment_id: int, author: str) -> None:
    """`StateError` unless the comment is there, `author`'s, and not deleted."""
    found = connection.execute(select(COMMENTS.c.author, COMMENTS.c.body).where(COMMENTS.c.id == comment_id)).first()
    if found is None:
        raise StateError(f"There is no comment {comment_id}.")
    if found.author != author:
        raise StateError("Only its author can change a comment.")
    if not found.body:
        raise StateError("That comment was deleted.")
