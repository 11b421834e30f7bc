"""The writer of issues and events: an error or message event is grouped (app/inbox/grouping.py)
into its issue, new or counted again, and stored once per `event_id`, on the caller's connection
(the ingest transaction), with the alert it makes due, if any (app/alerts/triggers.py), and its
tags counted for the issue's tag index (queued in the same transaction: app/inbox/tag_index.py)."""

from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy
from sqlalchemy import bindparam, case, insert, select, update

from app import db
from app.alerts import triggers
from app.inbox import states
from app.inbox.grouping import CULPRIT_LENGTH, LEVEL_LENGTH, group
from app.inbox.tables import EVENTS, GROUPHASHES, ISSUES
from app.inbox.tag_index import TagCounts, derived_tags
from app.protocol.fields import cut, mapping, seconds

# Fields kept in columns, cut at Relay's limits (relay-event-schema `MaxChars`), as grouping does:
# they are listed, filtered on and shown. A release or transaction name: 200; an environment: 64;
# a platform, operation, status or level: 128; trace and span ids (32 and 16 hex digits): 64.
NAME_LENGTH, ENVIRONMENT_LENGTH, ID_LENGTH = CULPRIT_LENGTH, 64, 64

# The statements of the ingest path, built once: building them per call cost more than running them.
STORED_EVENT = select(EVENTS.c.id).where(
    EVENTS.c.project_id == bindparam("project_id"), EVENTS.c.event_id == bindparam("event_id"))
# An event's issue: the one its hash made, or the one that issue was merged into (app/inbox/merge.py).
# Locked (PostgreSQL; SQLite writes one transaction at a time): its status and count are read as the
# last transaction that changed it left them (a feeder, or the console: a merge, a status change).
# Two feeders do not write one issue at once (app/ingest/issue_keys.py `Keys`), nor wait for each other here.
# FOR NO KEY UPDATE, as the UPDATE that counts the event locks it: the tag counter's foreign-key checks
# (FOR KEY SHARE of the issue, app/ingest/tag_counter.py) never wait for it, nor it for them (with FOR
# UPDATE the two deadlocked under load: bench.triage on PostgreSQL).
FIND_ISSUE = select(
    ISSUES.c.id, ISSUES.c.status, ISSUES.c.resolved_in_release, ISSUES.c.event_count, ISSUES.c.ignored_until,
    ISSUES.c.ignored_until_count,
).select_from(GROUPHASHES.join(ISSUES, ISSUES.c.id == GROUPHASHES.c.issue_id)).where(
    GROUPHASHES.c.project_id == bindparam("project_id"), GROUPHASHES.c.fingerprint == bindparam("fingerprint")
).with_for_update(of=ISSUES, key_share=True)
INSERT_ISSUE = insert(ISSUES)
INSERT_GROUPHASH = insert(GROUPHASHES)
COUNT_EVENT = update(ISSUES).where(ISSUES.c.id == bindparam("issue_id")).values(
    last_seen=case((ISSUES.c.last_seen > bindparam("received_at"), ISSUES.c.last_seen), else_=bindparam("received_at")),
    event_count=ISSUES.c.event_count + 1, last_event_id=bindparam("new_event_id"), level=bindparam("new_level"),
)
INSERT_EVENT = insert(EVENTS)


def write_event(connection: sqlalchemy.Connection, project_id: int, event: dict[str, Any],
                received_at: float, kept: dict[str, Any], tags: TagCounts | None = None) -> bool:
    """Store the event in its issue; False if the project has its `event_id` already. `kept`: where
    the event is kept (its `payload` text, or its outbox row's `envelope_id` and `item_index`).
    Its tags are counted into `tags`, for the caller to queue with its batch (None: queued now)."""
    event_id = event_id_of(event.get("event_id"))
    if stored(connection, STORED_EVENT, project_id, event_id):
        return False
    grouped = group(event)
    release = cut(event.get("release"), NAME_LENGTH)
    found = connection.execute(FIND_ISSUE, {"project_id": project_id, "fingerprint": grouped.fingerprint}).first()
    issue_id: int
    if found is None:
        issue_id = db.inserted_id(connection.execute(INSERT_ISSUE, {
            "project_id": project_id, "fingerprint": grouped.fingerprint, "title": grouped.title,
            "culprit": grouped.culprit, "level": grouped.level, "kind": grouped.kind, "status": states.UNRESOLVED,
            "resolved_in_release": "", "first_seen": received_at, "last_seen": received_at, "event_count": 1,
            "last_event_id": event_id,
        }))
        connection.execute(INSERT_GROUPHASH, {"project_id": project_id, "fingerprint": grouped.fingerprint,
                                              "issue_id": issue_id})
        what, event_count = triggers.NEW, 1
    else:
        issue_id, status, resolved_in, counted, ignored_until, ignored_until_count = found
        event_count = counted + 1
        connection.execute(COUNT_EVENT, {"issue_id": issue_id, "received_at": received_at,
                                         "new_event_id": event_id, "new_level": grouped.level})
        regressed = states.after_new_event(connection, issue_id, status, resolved_in, release, event_id)
        states.after_ignored_event(connection, issue_id, status, ignored_until, ignored_until_count,
                                   received_at, event_count)
        what = triggers.outcome(status, regressed)
    environment = cut(event.get("environment"), ENVIRONMENT_LENGTH)
    connection.execute(INSERT_EVENT, {
        "project_id": project_id, "issue_id": issue_id, "event_id": event_id, "received_at": received_at,
        "timestamp": seconds(event.get("timestamp")), "level": grouped.level,
        "platform": cut(event.get("platform"), LEVEL_LENGTH), "environment": environment,
        "release": release, "title": grouped.title, "envelope_id": None, "item_index": None,
        "fingerprint": grouped.fingerprint, "trace_id": trace_of(event), **kept,
    })
    triggers.after_event(connection, project_id, issue_id, what, event_count, environment, release, received_at)
    counts = TagCounts() if tags is None else tags
    counts.add(issue_id, derived_tags(event), received_at)
    if tags is None:
        counts.queue(connection)
    return True


def trace_of(event: dict[str, Any]) -> str:
    """The trace the event happened in (`contexts.trace.trace_id`), "" when none."""
    return cut(mapping(mapping(event.get("contexts")).get("trace")).get("trace_id"), ID_LENGTH).lower()


def stored(connection: sqlalchemy.Connection, statement: sqlalchemy.Select, project_id: int, event_id: str) -> bool:
    """Whether the project already has this event (or transaction) id (`statement`: STORED_EVENT or
    the transaction writer's)."""
    return connection.execute(statement, {"project_id": project_id, "event_id": event_id}).first() is not None


def event_id_of(value: Any) -> str:
    """The SDK's event id as 32 lower-case hex digits, or a new one when it sent none that is."""
    found = str(value or "").replace("-", "").lower()
    return found if len(found) == 32 and all(c in "0123456789abcdef" for c in found) else uuid.uuid4().hex
