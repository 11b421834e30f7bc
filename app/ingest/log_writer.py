"""The writer of what comes beside events and transactions: log lines, user feedback, and client
reports, summed into one row per (project, kind, key). Sessions are release health's
(app/releases/session_writer.py)."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy
from sqlalchemy import insert, update

from app.inbox.grouping import LEVEL_LENGTH
from app.inbox.tables import COUNTS, FEEDBACK, LOGS
from app.ingest.event_writer import ENVIRONMENT_LENGTH, ID_LENGTH, NAME_LENGTH
from app.protocol.fields import cut, listed, mapping, seconds, text, whole

URL_LENGTH = 2048  # of the page a piece of feedback was sent from


def write_logs(connection: sqlalchemy.Connection, project_id: int, batch: dict[str, Any]) -> int:
    """Store a log item's lines, each with the environment and release its attributes name; how many
    there were."""
    rows = []
    for item in listed(batch.get("items")):
        if not isinstance(item, dict):
            continue
        attributes = mapping(item.get("attributes"))
        rows.append({
            "project_id": project_id, "timestamp": seconds(item.get("timestamp")) or 0.0,
            "level": cut(item.get("level"), LEVEL_LENGTH) or "info", "body": text(item.get("body")),
            "trace_id": cut(item.get("trace_id"), ID_LENGTH), "attributes": json.dumps(attributes),
            "environment": cut(attribute(attributes, "sentry.environment"), ENVIRONMENT_LENGTH),
            "release": cut(attribute(attributes, "sentry.release"), NAME_LENGTH),
        })
    if rows:
        connection.execute(insert(LOGS), rows)
    return len(rows)


def attribute(attributes: dict[str, Any], name: str) -> str | int | float | None:
    """A log line's attribute, as SDKs send it ({"value": ..., "type": ...}) or bare; None unless a
    string or a number."""
    found = attributes.get(name)
    value = found.get("value") if isinstance(found, dict) else found
    return value if isinstance(value, str | int | float) and not isinstance(value, bool) else None


def write_feedback(connection: sqlalchemy.Connection, project_id: int, kind: str,
                   payload: dict[str, Any], received_at: float) -> None:
    """Store a `feedback` item, with the page it was sent from (the widget's `contexts.feedback.url`,
    else the item's `request.url`) and its release; or the older `user_report`, which names neither."""
    url = release = ""
    if kind == "feedback":
        contexts = mapping(payload.get("contexts"))
        found = mapping(contexts.get("feedback"))
        values = (found.get("associated_event_id"), found.get("name"), found.get("contact_email"), found.get("message"))
        url = cut(found.get("url"), URL_LENGTH) or cut(mapping(payload.get("request")).get("url"), URL_LENGTH)
        release = cut(payload.get("release"), NAME_LENGTH)
    else:  # the older user_report
        values = (payload.get("event_id"), payload.get("name"), payload.get("email"), payload.get("comments"))
    event_id, name, email, message = (text(v) for v in values)
    connection.execute(insert(FEEDBACK).values(
        project_id=project_id, received_at=received_at, event_id=event_id.replace("-", "").lower(),
        name=name, email=email, message=message, url=url, release=release,
    ))


def write_counts(connection: sqlalchemy.Connection, project_id: int, payload: dict[str, Any]) -> None:
    """Add a client report (what an SDK discarded, by category and reason) to the project's counts."""
    for kind, key, count in counts(payload):
        if count > 0:
            add_count(connection, project_id, kind, key, count)


def add_count(connection: sqlalchemy.Connection, project_id: int, kind: str, key: str, count: int) -> None:
    """Add `count` to the project's count of `kind` and `key` (what inbound filters dropped, too)."""
    where = (COUNTS.c.project_id == project_id, COUNTS.c.kind == kind, COUNTS.c.key == key)
    if connection.execute(update(COUNTS).where(*where).values(count=COUNTS.c.count + count)).rowcount == 0:
        connection.execute(insert(COUNTS).values(project_id=project_id, kind=kind, key=key, count=count))


def counts(payload: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(kind, key, count) for a client report."""
    discarded = listed(payload.get("discarded_events"))
    return [("discarded", f"{text(d.get('category'))}|{text(d.get('reason'))}", _whole(d.get("quantity")))
            for d in discarded if isinstance(d, dict)]


def _whole(value: Any) -> int:
    return value if whole(value) and value > 0 else 0
