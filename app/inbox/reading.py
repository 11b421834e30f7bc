"""Reading the inbox back, for the JSON API and the console pages: issues and their events
(`InboxReader`, with what users wrote about them), transactions and log lines (`TraceReader`).

An event is read back as ingest left it (`kept_events`): from its envelope's outbox row, or from its
own row, whole or as sent with a patch of what ingest changed (app/sourcemaps/event_patch.py).
Whatever is stored is read with the same strictness as at ingest (app/protocol/payloads.py), and one
that cannot be read is that event's problem only (None, logged), never the page's: the database may
hold rows from before a limit, or edited by hand.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import sqlalchemy
from sqlalchemy import select

from app.inbox import states
from app.inbox.tables import COUNTS, EVENTS, FEEDBACK, ISSUE_COLUMNS, ISSUES, MAX_ENVELOPE_BYTES
from app.projects.options_store import FILTERED
from app.projects.tables import PROJECTS
from app.sourcemaps import event_patch
from app.tables import chunks
from reflex_lookout.protocol import encodings, envelope, payloads
from reflex_lookout.tables import OUTBOX

logger = logging.getLogger(__name__)
# What an outbox row that cannot be read back raises.
UNREADABLE_ENVELOPE = (envelope.EnvelopeError, encodings.DecodeError, ValueError)


class InboxReader:
    """Read access to the inbox (the JSON API and the console pages)."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def dropped(self, project_id: int) -> dict[str, int]:
        """How many events and transactions each inbound filter dropped for the project, by filter
        name (counted by the ingest transaction that dropped them)."""
        query = select(COUNTS.c.key, COUNTS.c.count).where(COUNTS.c.project_id == project_id, COUNTS.c.kind == FILTERED)
        with self.engine.connect() as connection:
            return {key: int(count) for key, count in connection.execute(query)}

    def issue(self, issue_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as connection:
            row = connection.execute(select(*ISSUE_COLUMNS).where(ISSUES.c.id == issue_id)).mappings().first()
        return dict(row) if row else None

    def facets(self) -> dict[str, list[str]]:
        """The levels, environments and releases there are to filter by, and the projects ("id · name")."""
        with self.engine.connect() as connection:
            return {
                "project": [f"{i} · {name}" for i, name in connection.execute(
                    select(PROJECTS.c.id, PROJECTS.c.name).order_by(PROJECTS.c.id))],
                "level": sorted(connection.execute(select(ISSUES.c.level).distinct()).scalars()),
                "environment": sorted(e for e in connection.execute(select(EVENTS.c.environment).distinct()).scalars() if e),
                "release": sorted(r for r in connection.execute(select(EVENTS.c.release).distinct()).scalars() if r),
            }

    def latest_event(self, issue_id: int) -> dict[str, Any] | None:
        found = self.issue_event(issue_id, 0)
        return found[0] if found else None

    def issue_event(self, issue_id: int, position: int) -> tuple[dict[str, Any], int] | None:
        """The issue's stored event at `position` (0: the latest, 1: the one before, ...) and how
        many it has stored."""
        with self.engine.connect() as connection:
            stored = connection.execute(
                select(sqlalchemy.func.count()).select_from(EVENTS).where(EVENTS.c.issue_id == issue_id)
            ).scalar_one()
            found = kept_events(connection, connection.execute(
                select(*KEPT).where(EVENTS.c.issue_id == issue_id).order_by(EVENTS.c.id.desc())
                .limit(1).offset(max(0, position))
            ).all())
        return (found[0], int(stored)) if found and found[0] is not None else None

    def issue_events(self, issue_id: int, limit: int, oldest: bool = False) -> list[dict[str, Any]]:
        """Up to `limit` stored events of the issue, newest (or `oldest`) first, as `event` gives one."""
        order = EVENTS.c.id if oldest else EVENTS.c.id.desc()
        with self.engine.connect() as connection:
            rows = connection.execute(select(EVENTS.c.project_id, EVENTS.c.received_at, *KEPT)
                                      .where(EVENTS.c.issue_id == issue_id).order_by(order).limit(limit)).all()
            found = kept_events(connection, [row[2:] for row in rows])
        return [{"issue_id": issue_id, "project_id": row[0], "received_at": row[1], "event": event}
                for row, event in zip(rows, found, strict=True) if event is not None]

    def feedback(self, issue_id: int, limit: int = 50) -> list[dict[str, Any]]:
        """What users wrote about the issue's stored events, newest first: feedback of the issue's own
        project only (an event id is the SDK's: another project's feedback may name the same one)."""
        project = select(ISSUES.c.project_id).where(ISSUES.c.id == issue_id).scalar_subquery()
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(*FEEDBACK_COLUMNS)
                .where(FEEDBACK.c.project_id == project,
                       FEEDBACK.c.event_id.in_(select(EVENTS.c.event_id).where(EVENTS.c.issue_id == issue_id)))
                .order_by(FEEDBACK.c.id.desc()).limit(limit)
            ).mappings().all()
        return [dict(row) for row in rows]

    def feedback_list(self, project: int | None, limit: int = 100, before_id: int | None = None) -> list[dict[str, Any]]:
        """What users wrote, newest first: of `project` (None: every project), older than `before_id`
        when given; each with the issue of the event it is about when that event is stored (`issue_id`
        and `issue_title`; None and "" when not)."""
        about = FEEDBACK.outerjoin(EVENTS, sqlalchemy.and_(
            FEEDBACK.c.event_id != "", EVENTS.c.project_id == FEEDBACK.c.project_id,
            EVENTS.c.event_id == FEEDBACK.c.event_id,
        )).outerjoin(ISSUES, ISSUES.c.id == EVENTS.c.issue_id)
        query = select(*FEEDBACK_COLUMNS, FEEDBACK.c.project_id, FEEDBACK.c.event_id, EVENTS.c.issue_id,
                       ISSUES.c.title.label("issue_title")).select_from(about)
        if project is not None:
            query = query.where(FEEDBACK.c.project_id == project)
        if before_id is not None:
            query = query.where(FEEDBACK.c.id < before_id)
        with self.engine.connect() as connection:
            rows = connection.execute(
                query.order_by(FEEDBACK.c.id.desc()).limit(max(1, min(limit, MAX_FEEDBACK_LISTED)))).mappings().all()
        return [{**row, "issue_title": row["issue_title"] or ""} for row in rows]

    def feedback_projects(self) -> list[str]:
        """The projects with any feedback stored ("id · name"), for /feedback's filter."""
        with self.engine.connect() as connection:
            return [f"{i} · {name}" for i, name in connection.execute(
                select(PROJECTS.c.id, PROJECTS.c.name)
                .where(sqlalchemy.exists(select(FEEDBACK.c.id).where(FEEDBACK.c.project_id == PROJECTS.c.id)))
                .order_by(PROJECTS.c.id))]

    def counts(self, kind: str) -> dict[str, int]:
        """What SDKs discarded ("discarded": "category|reason") or inbound filters dropped ("filtered":
        the filter's name), summed over projects. (Before migration 0027, session updates were counted
        here too, as "session"; release health counts sessions now: app/releases/.)"""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(COUNTS.c.key, sqlalchemy.func.sum(COUNTS.c.count)).where(COUNTS.c.kind == kind).group_by(COUNTS.c.key)
            ).all()
        return {key: int(total) for key, total in rows}

    def hourly(self, issue_ids: list[int], now: float, hours: int = 24) -> dict[int, list[int]]:
        """Stored events per hour over the last `hours`, oldest hour first, per issue."""
        start = now - hours * 3600
        counts = {issue_id: [0] * hours for issue_id in issue_ids}
        if not issue_ids:
            return counts
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(EVENTS.c.issue_id, EVENTS.c.received_at)
                .where(EVENTS.c.issue_id.in_(issue_ids), EVENTS.c.received_at >= start)
            )
            for issue_id, received_at in rows:
                counts[issue_id][min(hours - 1, int((received_at - start) // 3600))] += 1
        return counts

    def history(self, issue_id: int) -> list[dict[str, Any]]:
        with self.engine.connect() as connection:
            return states.history(connection, issue_id)

    def event(self, event_id: str) -> dict[str, Any] | None:
        """The stored event as the SDK sent it, with its issue and project."""
        wanted = event_id.replace("-", "").lower()
        with self.engine.connect() as connection:
            row = connection.execute(
                select(EVENTS.c.issue_id, EVENTS.c.project_id, EVENTS.c.received_at, *KEPT)
                .where(EVENTS.c.event_id == wanted).order_by(EVENTS.c.id).limit(1)
            ).first()
            [event] = kept_events(connection, [row[3:]]) if row is not None else [None]
        if row is None or event is None:
            return None
        issue_id, project_id, received_at = row[:3]
        return {"issue_id": issue_id, "project_id": project_id, "received_at": received_at, "event": event}


KEPT = (EVENTS.c.payload, EVENTS.c.envelope_id, EVENTS.c.item_index)  # where an event is kept
FEEDBACK_COLUMNS = (FEEDBACK.c.id, FEEDBACK.c.received_at, FEEDBACK.c.name, FEEDBACK.c.email, FEEDBACK.c.message,
                    FEEDBACK.c.url, FEEDBACK.c.release)
MAX_FEEDBACK_LISTED = 500  # pieces of feedback one call of `feedback_list` reads at most


def kept_events(connection: sqlalchemy.Connection,
                rows: Sequence[Sequence[Any]]) -> list[dict[str, Any] | None]:
    """The events of `rows` of KEPT, as sent (and scrubbed) and as ingest changed them (symbolicated, described by
    their User-Agent): from their own payload or their envelope's outbox row
    (None for one whose row is gone, which retention does not do while an event refers to it)."""
    wanted = sorted({row[1] for row in rows if not row[0] and row[1] is not None})
    envelopes: dict[int, envelope.Envelope] = {}
    for chunk in chunks(wanted):
        for row_id, body, encoding in connection.execute(
            select(OUTBOX.c.id, OUTBOX.c.body, OUTBOX.c.content_encoding).where(OUTBOX.c.id.in_(chunk))
        ):
            try:
                envelopes[row_id] = envelope.parse(encodings.decode(body, encoding, MAX_ENVELOPE_BYTES), MAX_ENVELOPE_BYTES)
            except UNREADABLE_ENVELOPE as exc:
                logger.warning("outbox row %s holds no readable envelope: %s", row_id, exc)
    return [_kept_event(payload, envelopes.get(envelope_id), item_index) for payload, envelope_id, item_index in rows]


def _kept_event(payload: str, kept_in: envelope.Envelope | None, item_index: int | None) -> dict[str, Any] | None:
    """One stored event (None if it cannot be read: that event's problem, never the page's)."""
    try:
        if payload:  # kept as sent with a patch of what ingest changed (app/sourcemaps/event_patch.py), or whole
            return event_patch.read_kept(payload) if event_patch.is_kept_text(payload) else payloads.load_object(payload)
        if kept_in is not None and item_index is not None and item_index < len(kept_in.items):
            return payloads.load_object(kept_in.items[item_index].payload)
    except payloads.UnreadablePayload as exc:
        logger.warning("a stored event cannot be read: %s", exc)
    return None
