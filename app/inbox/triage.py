"""Triage, as the console's pages call it: each operation of activity.py, merge.py and bulk.py in a
transaction of its own. Refusals are `states.StateError` sentences, for the page to show."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import sqlalchemy

from app.inbox import activity, bulk, merge


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
