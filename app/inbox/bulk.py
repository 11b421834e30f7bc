"""One action on many issues (a selection, or every issue a search matched): resolve, resolve in the
next release, ignore, unresolve, assign, merge or delete.

Thousands of issues are done CHUNK at a time, each chunk in a transaction of its own, so no
transaction holds the database for long and `progress` can tell how far it got. It blocks on the
database throughout: run it in a worker thread, never on the event loop. An issue the action does
not apply to (already resolved, gone) is skipped and counted, with its sentence; it never stops the
others. Merge is the exception: it takes all its issues at once (at most merge.MAX_MERGE).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

import sqlalchemy
from sqlalchemy import select

from app.inbox import activity, eviction, merge, states
from app.inbox.states import StateError
from app.inbox.tables import ISSUES
from app.tables import chunks

logger = logging.getLogger(__name__)
KINDS = ("resolve", "resolve_next_release", "ignore", "unresolve", "assign", "merge", "delete")
CHUNK = 500  # issues per transaction
MAX_ISSUES = 10_000  # per action
MAX_ERRORS = 20  # sentences kept in an Outcome

Progress = Callable[[int, int], None]  # (issues done or skipped so far, of how many)


@dataclass(frozen=True)
class Action:
    """What to do: `kind` (one of KINDS); an ignore's `for_s` seconds or `more_events` (neither: for
    good); an assignment's `assignee` ("" unassigns)."""

    kind: str
    for_s: float | None = None
    more_events: int | None = None
    assignee: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"A bulk action is one of {', '.join(KINDS)}, not {self.kind!r}.")
        if self.kind == "assign" and self.assignee is None:
            raise ValueError("An assignment names its assignee (\"\" to unassign).")
        if (self.for_s is not None and self.for_s <= 0) or (self.more_events is not None and self.more_events <= 0):
            raise ValueError("An ignore lasts a positive time, or a positive number of events.")


@dataclass(frozen=True)
class Outcome:
    done: int  # issues the action was applied to
    skipped: int  # issues it did not apply to
    errors: list[str] = field(default_factory=list)  # why, one sentence each, the first MAX_ERRORS


def apply(engine: sqlalchemy.Engine, action: Action, ids: Sequence[int], actor: str, progress: Progress | None = None,
          also: Collection[str] = ()) -> Outcome:
    """Apply `action` to the issues `ids` (at most MAX_ISSUES; a repeated id counts once), by `actor`;
    `progress(done, total)` after each chunk. `also`: users an issue may be assigned to beside the
    console's (activity.assignable)."""
    wanted = list(dict.fromkeys(ids))
    if len(wanted) > MAX_ISSUES:
        raise ValueError(f"A bulk action takes at most {MAX_ISSUES:,} issues, not {len(wanted):,}.")
    if action.kind == "merge":
        return _merge(engine, wanted, actor, progress)
    if action.kind == "assign":
        with engine.connect() as connection:
            try:
                activity.check_assignee(connection, action.assignee or "", also)
            except StateError as exc:
                return Outcome(0, len(wanted), [str(exc)])
    done = 0
    errors: list[str] = []  # one sentence per skipped issue
    for chunk in chunks(wanted, CHUNK):
        with engine.begin() as connection:
            if action.kind == "delete":
                done += _delete(connection, chunk, errors)
            else:
                for issue_id in chunk:
                    try:
                        _one(connection, action, issue_id, actor, also)
                        done += 1
                    except StateError as exc:  # that issue's problem: nothing of it was written
                        errors.append(str(exc))
        if progress is not None:
            progress(done + len(errors), len(wanted))
    logger.info("bulk %s by %s: %d done, %d skipped", action.kind, actor, done, len(errors))
    return Outcome(done, len(errors), errors[:MAX_ERRORS])


def _one(connection: sqlalchemy.Connection, action: Action, issue_id: int, actor: str, also: Collection[str]) -> None:
    """Apply the action to one issue; each operation refuses (StateError) before it writes anything."""
    if action.kind in ("resolve", "resolve_next_release"):
        states.change(connection, issue_id, states.RESOLVED, actor, in_next_release=action.kind == "resolve_next_release")
    elif action.kind == "ignore":
        states.ignore(connection, issue_id, actor, for_s=action.for_s, more_events=action.more_events)
    elif action.kind == "unresolve":
        states.change(connection, issue_id, states.UNRESOLVED, actor)
    elif action.kind == "assign":
        activity.assign(connection, issue_id, action.assignee or "", actor, also)


def _delete(connection: sqlalchemy.Connection, chunk: Sequence[int], errors: list[str]) -> int:
    found = set(connection.execute(select(ISSUES.c.id).where(ISSUES.c.id.in_(chunk))).scalars())
    errors.extend(f"There is no issue {issue_id}." for issue_id in chunk if issue_id not in found)
    return eviction.delete_issues(connection, sorted(found))


def _merge(engine: sqlalchemy.Engine, ids: list[int], actor: str, progress: Progress | None) -> Outcome:
    try:
        with engine.begin() as connection:
            merge.merge(connection, ids, actor)
    except StateError as exc:  # the merge's: it is all or nothing
        return Outcome(0, len(ids), [str(exc)])
    if progress is not None:
        progress(len(ids), len(ids))
    return Outcome(len(ids), 0, [])
