"""Merge issues into one, and unmerge a grouping hash back out, on the caller's connection.

An event finds its issue through its grouping hash (`inbox_grouphash`, app/ingest/event_writer.py).
Merging repoints the hashes of the merged issues at the one that stays, so new events of any of them
land there; the stored events, comments, history and tag counts (queued or counted) move with them. Unmerging a hash
moves it and its stored events to a new issue; the tag index of both issues is then counted again
from their stored events (the merged index cannot tell which hash a count came from).

Both lock the issues' rows first (PostgreSQL), so an event being written to one of them waits and
then finds the issue its hash points at now.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import sqlalchemy
from sqlalchemy import delete, func, insert, select, update

from app import db
from app.inbox import activity, states
from app.inbox.grouping import group
from app.inbox.reading import KEPT, kept_events
from app.inbox.states import CHANGES, StateError
from app.inbox.tables import BACKFILLS, COMMENTS, EVENTS, GROUPHASHES, ISSUE_TAGS, ISSUES, TAG_QUEUE
from app.inbox.tag_index import TagCounts, derived_tags, upsert

logger = logging.getLogger(__name__)
MAX_MERGE = 100  # issues merged at once
CHUNK = 500  # stored events read at once when counting tags again
# Feedback follows its event (by event id). Tag counts still queued (app/ingest/tag_counter.py) move
# before the counted ones: on PostgreSQL the UPDATE waits for a counter step holding them, and the
# counted ones are then read with what that step added.
MOVED_WITH_AN_ISSUE = (GROUPHASHES, EVENTS, COMMENTS, CHANGES, TAG_QUEUE)


def merge(connection: sqlalchemy.Connection, issue_ids: Sequence[int], actor: str) -> int:
    """Merge 2 to MAX_MERGE issues of one project into the one with the most events (ties: the
    lowest id); its id. The others are gone afterwards."""
    wanted = sorted(set(issue_ids))
    if not 2 <= len(wanted) <= MAX_MERGE:
        raise StateError(f"A merge takes 2 to {MAX_MERGE} issues, not {len(wanted)}.")
    rows = connection.execute(
        select(ISSUES.c.id, ISSUES.c.project_id, ISSUES.c.event_count, ISSUES.c.first_seen, ISSUES.c.last_seen,
               ISSUES.c.last_event_id, ISSUES.c.ignored_until_count)
        .where(ISSUES.c.id.in_(wanted)).order_by(ISSUES.c.id).with_for_update()
    ).all()
    missing = sorted(set(wanted) - {row.id for row in rows})
    if missing:
        raise StateError(f"There is no issue {', '.join(map(str, missing))}.")
    projects = sorted({row.project_id for row in rows})
    if len(projects) > 1:
        raise StateError(f"Only issues of one project can be merged; these are of projects {', '.join(map(str, projects))}.")
    stays = max(rows, key=lambda row: (row.event_count, -row.id))
    others = [row.id for row in rows if row.id != stays.id]
    newest = max(rows, key=lambda row: (row.last_seen, row.id))
    for table in MOVED_WITH_AN_ISSUE:
        connection.execute(update(table).where(table.c.issue_id.in_(others)).values(issue_id=stays.id))
    _add_tags(connection, others, stays.id)
    added = sum(row.event_count for row in rows if row.id != stays.id)
    connection.execute(update(ISSUES).where(ISSUES.c.id == stays.id).values(
        event_count=stays.event_count + added,
        first_seen=min(row.first_seen for row in rows), last_seen=newest.last_seen, last_event_id=newest.last_event_id,
        # "Ignored until N more events" keeps meaning more events than it has now.
        ignored_until_count=None if stays.ignored_until_count is None else stays.ignored_until_count + added,
    ))
    connection.execute(delete(ISSUES).where(ISSUES.c.id.in_(others)))
    activity.record(connection, stays.id, actor, activity.MERGED, ", ".join(f"#{issue_id}" for issue_id in others))
    logger.info("issues %s merged into %d by %s", others, stays.id, actor)
    return int(stays.id)


def hashes(connection: sqlalchemy.Connection, issue_id: int) -> list[tuple[str, int]]:
    """The issue's grouping hashes with how many of its stored events each grouped, most first."""
    stored: dict[str, int] = dict(connection.execute(
        select(EVENTS.c.fingerprint, func.count()).where(EVENTS.c.issue_id == issue_id).group_by(EVENTS.c.fingerprint)
    ).tuples().all())
    found = connection.execute(select(GROUPHASHES.c.fingerprint).where(GROUPHASHES.c.issue_id == issue_id)).scalars()
    return sorted(((fingerprint, int(stored.get(fingerprint, 0))) for fingerprint in found), key=lambda h: (-h[1], h[0]))


def unmerge(connection: sqlalchemy.Connection, issue_id: int, fingerprint: str, actor: str) -> int:
    """Move the hash `fingerprint` of the issue, and its stored events, to a new issue of its own;
    the new issue's id. Not the issue's only hash, nor one no stored event has (it would have
    nothing to be titled after)."""
    issue = connection.execute(
        select(ISSUES.c.project_id, ISSUES.c.fingerprint, ISSUES.c.event_count)
        .where(ISSUES.c.id == issue_id).with_for_update()).first()
    if issue is None:
        raise StateError(f"There is no issue {issue_id}.")
    found = dict(hashes(connection, issue_id))
    if fingerprint not in found:
        raise StateError(f"Issue {issue_id} has no hash {fingerprint[:12]}.")
    if len(found) == 1:
        raise StateError(f"Hash {fingerprint[:12]} is the only one of issue {issue_id}: there is nothing to unmerge it from.")
    if not found[fingerprint]:
        raise StateError(f"No stored event of issue {issue_id} has hash {fingerprint[:12]}, so there is nothing to unmerge.")
    if issue.fingerprint == fingerprint:  # it is named after a hash it keeps: the one with the most stored events
        rest = next(h for h in found if h != fingerprint)
        named = _named_after(connection, (EVENTS.c.issue_id == issue_id) & (EVENTS.c.fingerprint == rest)) if found[rest] else {}
        connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(fingerprint=rest, **named))
    new_id = _new_issue(connection, issue_id, issue.project_id, fingerprint)
    connection.execute(update(GROUPHASHES).where(
        GROUPHASHES.c.project_id == issue.project_id, GROUPHASHES.c.fingerprint == fingerprint).values(issue_id=new_id))
    connection.execute(update(EVENTS).where(EVENTS.c.issue_id == issue_id, EVENTS.c.fingerprint == fingerprint)
                       .values(issue_id=new_id))
    _count_again(connection, issue_id, max(0, issue.event_count - found[fingerprint]))
    count_tags_again(connection, [issue_id, new_id])
    activity.record(connection, issue_id, actor, activity.UNMERGED, f"hash {fingerprint[:12]} to #{new_id}")
    activity.record(connection, new_id, actor, activity.UNMERGED, f"hash {fingerprint[:12]} from #{issue_id}")
    logger.info("hash %s of issue %d unmerged into %d by %s", fingerprint[:12], issue_id, new_id, actor)
    return new_id


def count_tags_again(connection: sqlalchemy.Connection, issue_ids: Sequence[int]) -> None:
    """The issues' tag index, counted again from their stored events, CHUNK at a time. Their counts
    still queued are dropped first (the stored events they came from are counted here). Events the tag
    backfill has still to do (app/ingest/tag_backfill.py) are left to it, which would count them twice."""
    connection.execute(delete(TAG_QUEUE).where(TAG_QUEUE.c.issue_id.in_(issue_ids)))
    connection.execute(delete(ISSUE_TAGS).where(ISSUE_TAGS.c.issue_id.in_(issue_ids)))
    pending = connection.execute(
        select(BACKFILLS.c.next_id, BACKFILLS.c.until_id).where(BACKFILLS.c.name == "tags")).first()
    after = 0
    while True:
        rows = connection.execute(
            select(EVENTS.c.id, EVENTS.c.issue_id, EVENTS.c.received_at, *KEPT)
            .where(EVENTS.c.issue_id.in_(issue_ids), EVENTS.c.id > after).order_by(EVENTS.c.id).limit(CHUNK)
        ).all()
        if not rows:
            return
        counts = TagCounts()
        for row, event in zip(rows, kept_events(connection, [row[3:] for row in rows]), strict=True):
            if event is not None and not (pending is not None and pending.next_id <= row.id <= pending.until_id):
                counts.add(row.issue_id, derived_tags(event), row.received_at)
        counts.write(connection)
        after = rows[-1].id


def _add_tags(connection: sqlalchemy.Connection, from_ids: Sequence[int], into: int) -> None:
    """Add the tag counts of `from_ids` into `into`'s (count summed, first and last seen widened), in
    the database: one issue may have thousands of values."""
    summed = select(
        sqlalchemy.literal(into, sqlalchemy.Integer), ISSUE_TAGS.c.key, ISSUE_TAGS.c.value, func.sum(ISSUE_TAGS.c.count),
        func.min(ISSUE_TAGS.c.first_seen), func.max(ISSUE_TAGS.c.last_seen),
    ).where(ISSUE_TAGS.c.issue_id.in_(from_ids)).group_by(ISSUE_TAGS.c.key, ISSUE_TAGS.c.value)
    names = ["issue_id", "key", "value", "count", "first_seen", "last_seen"]
    connection.execute(upsert(connection.dialect.name).from_select(names, summed))
    connection.execute(delete(ISSUE_TAGS).where(ISSUE_TAGS.c.issue_id.in_(from_ids)))


def _new_issue(connection: sqlalchemy.Connection, from_id: int, project_id: int, fingerprint: str) -> int:
    """An issue for the hash's stored events of `from_id`: named after the newest, counted from all."""
    mine = (EVENTS.c.issue_id == from_id) & (EVENTS.c.fingerprint == fingerprint)
    count, first, last = connection.execute(
        select(func.count(), func.min(EVENTS.c.received_at), func.max(EVENTS.c.received_at)).where(mine)).one()
    latest = connection.execute(select(EVENTS.c.event_id).where(mine).order_by(EVENTS.c.id.desc()).limit(1)).scalar()
    return db.inserted_id(connection.execute(insert(ISSUES).values(
        project_id=project_id, fingerprint=fingerprint, **_named_after(connection, mine), status=states.UNRESOLVED,
        resolved_in_release="", first_seen=first, last_seen=last, event_count=count, last_event_id=latest, assignee="",
    )))


def _named_after(connection: sqlalchemy.Connection, events: sqlalchemy.ColumnElement[bool]) -> dict[str, str]:
    """Title, culprit, level and kind of the newest of `events` (at least one), grouped again; what
    its row holds if it cannot be read."""
    newest = connection.execute(select(EVENTS.c.title, EVENTS.c.level, *KEPT).where(events)
                                .order_by(EVENTS.c.id.desc()).limit(1)).one()
    [event] = kept_events(connection, [newest[2:]])
    if event is None:
        return {"title": newest.title, "culprit": "", "level": newest.level, "kind": "error"}
    grouped = group(event)
    return {"title": grouped.title, "culprit": grouped.culprit, "level": grouped.level, "kind": grouped.kind}


def _count_again(connection: sqlalchemy.Connection, issue_id: int, event_count: int) -> None:
    """The issue's counts once a hash's events left: first and last seen from its stored events."""
    stored, first, last = connection.execute(select(
        func.count(), func.min(EVENTS.c.received_at), func.max(EVENTS.c.received_at)).where(EVENTS.c.issue_id == issue_id)
    ).one()
    latest = connection.execute(select(EVENTS.c.event_id).where(EVENTS.c.issue_id == issue_id)
                                .order_by(EVENTS.c.id.desc()).limit(1)).scalar()
    seen = {"first_seen": first, "last_seen": last, "last_event_id": latest} if stored else {}
    connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(event_count=max(event_count, stored), **seen))
