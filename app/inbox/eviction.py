"""What retention deletes, as SQL on one connection (the caller's transaction): events with the
envelopes no kept event is stored in any more, and whole issues; and how big stored text is.

An issue deleted here goes as `InboxStore.delete_issue` deletes one by hand: its events, their
feedback, its history, comments, tag counts and grouping hashes, the issue itself (the same error
later starts a new issue).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy
from sqlalchemy import Integer, delete, exists, select
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.functions import FunctionElement

from app.inbox.states import CHANGES
from app.inbox.tables import COMMENTS, EVENTS, FEEDBACK, GROUPHASHES, ISSUE_TAGS, ISSUES, READ, TAG_QUEUE
from app.tables import chunks
from reflex_lookout.tables import OUTBOX

# The order in which issues give way: the least seen first, then the longest unseen.
ISSUE_RANK = (ISSUES.c.event_count, ISSUES.c.last_seen, ISSUES.c.id)


class stored_bytes(FunctionElement[int]):  # an SQL function, named as one
    """The size in bytes of a text column's value, without reading it where the database can."""

    type = Integer()
    inherit_cache = True


@compiles(stored_bytes)
def _octet_length(element: stored_bytes, compiler: Any, **kw: Any) -> str:
    return f"octet_length({compiler.process(element.clauses, **kw)})"


@compiles(stored_bytes, "sqlite")
def _blob_length(element: stored_bytes, compiler: Any, **kw: Any) -> str:
    return f"length(CAST({compiler.process(element.clauses, **kw)} AS BLOB))"  # bytes, not characters


def delete_events(connection: sqlalchemy.Connection, ids: Sequence[int]) -> int:
    """Delete the events, then the envelopes they were stored in that hold no kept event now."""
    envelopes: set[int] = set()
    for chunk in chunks(ids):
        envelopes.update(connection.execute(
            select(EVENTS.c.envelope_id).where(EVENTS.c.id.in_(chunk), EVENTS.c.envelope_id.is_not(None))
        ).scalars())
        connection.execute(delete(EVENTS).where(EVENTS.c.id.in_(chunk)))
    drop_envelopes(connection, sorted(envelopes))
    return len(ids)


def drop_envelopes(connection: sqlalchemy.Connection, ids: Sequence[int]) -> int:
    """Delete those outbox rows no kept event is stored in (with their `inbox_read` rows)."""
    dropped = 0
    for chunk in chunks(ids):
        spare = connection.execute(select(OUTBOX.c.id).where(
            OUTBOX.c.id.in_(chunk), ~exists().where(EVENTS.c.envelope_id == OUTBOX.c.id))).scalars().all()
        if spare:
            connection.execute(delete(READ).where(READ.c.outbox_id.in_(spare)))
            dropped += connection.execute(delete(OUTBOX).where(OUTBOX.c.id.in_(spare))).rowcount or 0
    return dropped


def delete_issues(connection: sqlalchemy.Connection, ids: Sequence[int]) -> int:
    """Delete the issues with their events (and envelopes), their events' feedback, their history,
    comments, tag counts (queued or counted) and grouping hashes."""
    for chunk in chunks(ids):
        events = connection.execute(select(EVENTS.c.id, EVENTS.c.event_id).where(EVENTS.c.issue_id.in_(chunk))).all()
        for event_ids in chunks([event_id for _, event_id in events]):
            connection.execute(delete(FEEDBACK).where(FEEDBACK.c.event_id.in_(event_ids)))
        delete_events(connection, [row_id for row_id, _ in events])
        # The queued tag counts before the counted ones (see MOVED_WITH_AN_ISSUE in app/inbox/merge.py).
        for table in (CHANGES, COMMENTS, TAG_QUEUE, ISSUE_TAGS, GROUPHASHES):
            connection.execute(delete(table).where(table.c.issue_id.in_(chunk)))
        connection.execute(delete(ISSUES).where(ISSUES.c.id.in_(chunk)))
    return len(ids)
