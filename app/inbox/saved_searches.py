"""Saved searches: a user keeps their own; a maintainer pins one for everyone (owner "")."""

from __future__ import annotations

import time
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import delete, func, insert, or_, select

from app.inbox.states import StateError
from app.inbox.tables import SAVED_SEARCHES

PINNED = ""  # the owner of a search pinned for everyone
MAX_NAME = 80
MAX_QUERY = 1000  # as the search box (app/inbox/search)
MAX_PER_OWNER = 50


@dataclass(frozen=True)
class SavedSearch:
    id: int
    name: str
    query: str
    sort: str
    pinned: bool


class SavedSearches:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def visible_to(self, user: str) -> list[SavedSearch]:
        """The searches pinned for everyone, then `user`'s own, each in the order they were saved."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(SAVED_SEARCHES.c.id, SAVED_SEARCHES.c.name, SAVED_SEARCHES.c.query, SAVED_SEARCHES.c.sort,
                       SAVED_SEARCHES.c.owner)
                .where(or_(SAVED_SEARCHES.c.owner == PINNED, SAVED_SEARCHES.c.owner == user))
                .order_by(SAVED_SEARCHES.c.owner, SAVED_SEARCHES.c.id)
            ).all()
        return [SavedSearch(row_id, name, query, sort, owner == PINNED) for row_id, name, query, sort, owner in rows]

    def save(self, owner: str, name: str, query: str, sort: str) -> int:
        """Save a search for `owner` (PINNED: for everyone; the caller checks that a maintainer asked)."""
        name, query = name.strip(), query.strip()
        if not 0 < len(name) <= MAX_NAME:
            raise StateError(f"A saved search needs a name of 1 to {MAX_NAME} characters.")
        if len(query) > MAX_QUERY:
            raise StateError(f"A search is at most {MAX_QUERY} characters.")
        with self.engine.begin() as connection:
            count = connection.execute(
                select(func.count()).select_from(SAVED_SEARCHES).where(SAVED_SEARCHES.c.owner == owner)).scalar_one()
            if count >= MAX_PER_OWNER:
                raise StateError(f"At most {MAX_PER_OWNER} searches can be saved; delete one first.")
            result = connection.execute(insert(SAVED_SEARCHES).values(
                owner=owner, name=name, query=query, sort=sort, created_at=time.time()))
            return int(result.inserted_primary_key[0])  # type: ignore[index]  # one row was inserted

    def delete(self, search_id: int, user: str, may_unpin: bool) -> None:
        """Delete one of `user`'s searches, or a pinned one when `may_unpin` (a maintainer)."""
        owners = [user, PINNED] if may_unpin else [user]
        with self.engine.begin() as connection:
            deleted = connection.execute(delete(SAVED_SEARCHES).where(
                SAVED_SEARCHES.c.id == search_id, SAVED_SEARCHES.c.owner.in_(owners))).rowcount
        if not deleted:
            raise StateError("That saved search is not yours to delete.")
