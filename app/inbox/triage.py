"""Triage, as the console's pages call it: each operation of states.py, eviction.py, activity.py,
merge.py and bulk.py in a transaction of its own. Refusals are `states.StateError` sentences, for the
page to show."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence

import sqlalchemy
from sqlalchemy import select

from app.inbox import activity, bulk, eviction, merge, states
from app.inbox.tables import EVENTS, ISSUES

logger = logging.getLogger(__name__)


class Triage:
    def __init__(self, engine: sqlalchemy.Engine, env_users: Collection[str] = ()) -> None:
        """`env_users`: the names of LOOKOUT_CONSOLE_USERS, who may be assigned issues beside the
        console users the database holds."""
        self.engine = engine
        self.env_users = frozenset(env_users)

    def assign(self, issue_id: int, assignee: str, actor: str) -> None:
        with self.engine.begin() as connection:
            activity.assign(connection, issue_id, assignee, actor, self.env_users)

    def assignable(self) -> list[str]:
        with self.engine.connect() as connection:
            return activity.assignable(connection, self.env_users)

    def add_comment(self, issue_id: int, author: str, body: str) -> int:
        with self.engine.begin() as connection:
            return activity.add_comment(connection, issue_id, author, body)

    def edit_comment(self, comment_id: int, author: str, body: str) -> None:
        with self.engine.begin() as connection:
            activity.edit_comment(connection, comment_id, author, body)

    def delete_comment(self, comment_id: int, author: str) -> None:
        with self.engine.begin() as connection:
            activity.delete_comment(connection, comment_id, author)

    def timeline(self, issue_id: int) -> list[activity.Entry]:
        with self.engine.connect() as connection:
            return activity.timeline(connection, issue_id)

    def merge(self, issue_ids: Sequence[int], actor: str) -> int:
        """The id of the issue the others were merged into."""
        with self.engine.begin() as connection:
            return merge.merge(connection, issue_ids, actor)

    def hashes(self, issue_id: int) -> list[tuple[str, int]]:
        with self.engine.connect() as connection:
            return merge.hashes(connection, issue_id)

    def unmerge(self, issue_id: int, fingerprint: str, actor: str) -> int:
        """The id of the new issue the hash went to."""
        with self.engine.begin() as connection:
            return merge.unmerge(connection, issue_id, fingerprint, actor)

    def bulk(self, action: bulk.Action, ids: Sequence[int], actor: str, progress: bulk.Progress | None = None) -> bulk.Outcome:
        """Blocks for as long as thousands of issues take: call it from a worker thread."""
        return bulk.apply(self.engine, action, ids, actor, progress, self.env_users)

    def delete_issue(self, issue_id: int, actor: str) -> int:
        """Delete the issue with its stored events (and the envelopes no other kept event is stored
        in), their feedback and its history, as retention deletes issues (app/inbox/eviction.py); how
        many events went. An event with the same fingerprint later starts a new issue. `StateError`
        if there is no such issue."""
        with self.engine.begin() as connection:
            if connection.execute(select(ISSUES.c.id).where(ISSUES.c.id == issue_id)).first() is None:
                raise states.StateError(f"There is no issue {issue_id}.")
            events = connection.execute(
                select(sqlalchemy.func.count()).select_from(EVENTS).where(EVENTS.c.issue_id == issue_id)).scalar_one()
            eviction.delete_issues(connection, [issue_id])
        logger.info("issue %d deleted by %s with %d stored events", issue_id, actor, events)
        return int(events)

    def change_status(self, issue_id: int, to_status: str, actor: str, in_next_release: bool = False) -> str:
        """Move an issue to another status (see app/inbox/states.py); the status it had."""
        with self.engine.begin() as connection:
            return states.change(connection, issue_id, to_status, actor, in_next_release)
