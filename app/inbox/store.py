"""The embedded inbox's storage: projects, issues and events in the app's database.

`ingest_envelope` takes an envelope exactly as the tunnel stored it (body and content encoding),
finds the project from the DSN in its header, and keeps each error or message event: grouped into
an issue (app/inbox/grouping.py), stored once per `event_id`. Item types the inbox does not read
yet (transactions, logs, sessions, ...) stay in the outbox row the envelope came from.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy
from sqlalchemy import case, insert, select, update

from app.inbox import states
from app.inbox.grouping import group
from app.models import InboxEvent, InboxIssue, InboxProject
from app.monitoring import encodings, envelope
from app.monitoring.settings import Dsn

PROJECTS = InboxProject.__table__
ISSUES = InboxIssue.__table__
EVENTS = InboxEvent.__table__
MAX_ENVELOPE_BYTES = 100 * 1024 * 1024
EVENT_ITEM_TYPES = ("event",)


class UnknownProject(Exception):
    """The envelope names no DSN of a project of this inbox."""


@dataclass
class Ingested:
    events: int = 0  # new events stored
    duplicates: int = 0  # events whose event_id was already stored
    other_items: dict[str, int] = field(default_factory=dict)  # item types not read (yet)


class InboxStore:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def ensure_project(self, dsn: Dsn, name: str = "Lookout") -> int:
        """The project of `dsn` (its id and public key), created if missing."""
        project_id = int(dsn.project_id)
        with self.engine.begin() as connection:
            found = connection.execute(select(PROJECTS.c.public_key).where(PROJECTS.c.id == project_id)).first()
            if found is None:
                connection.execute(insert(PROJECTS).values(
                    id=project_id, name=name, public_key=dsn.public_key, created_at=time.time(),
                ))
            elif found[0] != dsn.public_key:
                raise ValueError(f"project {project_id} exists with another public key than {dsn}")
        return project_id

    def project_for(self, dsn_text: str | None) -> int:
        if not dsn_text:
            raise UnknownProject("The envelope names no DSN.")
        dsn = Dsn.parse(dsn_text)
        with self.engine.connect() as connection:
            found = connection.execute(select(PROJECTS.c.id).where(
                PROJECTS.c.id == int(dsn.project_id), PROJECTS.c.public_key == dsn.public_key,
            )).scalar()
        if found is None:
            raise UnknownProject(f"No project of this inbox has the DSN {dsn}.")
        return int(found)

    def ingest_envelope(self, body: bytes, content_encoding: str = "", received_at: float | None = None,
                        dsn: str | None = None) -> Ingested:
        """Keep the envelope's events; `dsn` names the project when the envelope's header does not
        (sentry-sdk puts none there; the outbox row records which DSN it came with)."""
        parsed = envelope.parse(encodings.decode(body, content_encoding, MAX_ENVELOPE_BYTES), MAX_ENVELOPE_BYTES)
        project_id = self.project_for(parsed.dsn or dsn)
        received_at = time.time() if received_at is None else received_at
        result = Ingested()
        with self.engine.begin() as connection:
            for item in parsed.items:
                if item.type not in EVENT_ITEM_TYPES:
                    result.other_items[item.type] = result.other_items.get(item.type, 0) + 1
                    continue
                event = json.loads(item.payload)
                if not isinstance(event, dict):
                    raise envelope.EnvelopeError(400, "An event item is not a JSON object.")
                event.setdefault("event_id", parsed.event_id)
                if self._ingest_event(connection, project_id, event, received_at):
                    result.events += 1
                else:
                    result.duplicates += 1
        return result

    def _ingest_event(self, connection: sqlalchemy.Connection, project_id: int, event: dict[str, Any],
                      received_at: float) -> bool:
        event_id = _event_id(event.get("event_id"))
        exists = connection.execute(select(EVENTS.c.id).where(
            EVENTS.c.project_id == project_id, EVENTS.c.event_id == event_id,
        )).first()
        if exists is not None:
            return False
        grouped = group(event)
        release = _text(event.get("release"))
        found = connection.execute(select(ISSUES.c.id, ISSUES.c.status, ISSUES.c.resolved_in_release).where(
            ISSUES.c.project_id == project_id, ISSUES.c.fingerprint == grouped.fingerprint,
        )).first()
        issue_id = found[0] if found else None
        if found is None:
            issue_id = connection.execute(insert(ISSUES).values(
                project_id=project_id, fingerprint=grouped.fingerprint, title=grouped.title,
                culprit=grouped.culprit, level=grouped.level, kind=grouped.kind, status=states.UNRESOLVED,
                first_seen=received_at, last_seen=received_at, event_count=1, last_event_id=event_id,
            )).inserted_primary_key[0]
        else:
            connection.execute(update(ISSUES).where(ISSUES.c.id == issue_id).values(
                last_seen=case((ISSUES.c.last_seen > received_at, ISSUES.c.last_seen), else_=received_at), event_count=ISSUES.c.event_count + 1,
                last_event_id=event_id, level=grouped.level,
            ))
            states.after_new_event(connection, issue_id, found[1], found[2], release, event_id)
        connection.execute(insert(EVENTS).values(
            project_id=project_id, issue_id=issue_id, event_id=event_id, received_at=received_at,
            timestamp=_timestamp(event.get("timestamp")), level=grouped.level,
            platform=_text(event.get("platform")), environment=_text(event.get("environment")),
            release=release, title=grouped.title, payload=json.dumps(event),
        ))
        return True


    def change_status(self, issue_id: int, to_status: str, actor: str, in_next_release: bool = False) -> str:
        """Move an issue to another status (see app/inbox/states.py); the status it had."""
        with self.engine.begin() as connection:
            return states.change(connection, issue_id, to_status, actor, in_next_release)



def _event_id(value: Any) -> str:
    text = str(value or "").replace("-", "").lower()
    return text if len(text) == 32 and all(c in "0123456789abcdef" for c in text) else uuid.uuid4().hex


def _timestamp(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None


def _text(value: Any) -> str:
    return "" if value is None else str(value)


ISSUE_COLUMNS = (
    ISSUES.c.id, ISSUES.c.project_id, ISSUES.c.title, ISSUES.c.culprit, ISSUES.c.level, ISSUES.c.kind,
    ISSUES.c.status, ISSUES.c.resolved_in_release, ISSUES.c.first_seen, ISSUES.c.last_seen, ISSUES.c.event_count,
    ISSUES.c.last_event_id,
)


class InboxReader:
    """Read access to the inbox (the JSON API and the console pages)."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def issues(self, status: str | None = None, limit: int = 50, offset: int = 0,
               search: str = "") -> tuple[list[dict[str, Any]], int]:
        """Issues, most recently seen first, and how many match in all. `status` "open" means
        unresolved or regressed; `search` matches title or culprit (case-insensitive)."""
        condition = sqlalchemy.true()
        if status == "open":
            condition = ISSUES.c.status.in_(states.OPEN)
        elif status:
            condition = ISSUES.c.status == status
        if search.strip():
            pattern = f"%{search.strip().lower()}%"
            condition = condition & (sqlalchemy.func.lower(ISSUES.c.title).like(pattern)
                                     | sqlalchemy.func.lower(ISSUES.c.culprit).like(pattern))
        with self.engine.connect() as connection:
            total = connection.execute(select(sqlalchemy.func.count()).select_from(ISSUES).where(condition)).scalar_one()
            rows = connection.execute(
                select(*ISSUE_COLUMNS).where(condition)
                .order_by(ISSUES.c.last_seen.desc(), ISSUES.c.id.desc()).limit(limit).offset(offset)
            ).mappings().all()
        return [dict(row) for row in rows], int(total)

    def issue(self, issue_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as connection:
            row = connection.execute(select(*ISSUE_COLUMNS).where(ISSUES.c.id == issue_id)).mappings().first()
        return dict(row) if row else None

    def latest_event(self, issue_id: int) -> dict[str, Any] | None:
        with self.engine.connect() as connection:
            payload = connection.execute(
                select(EVENTS.c.payload).where(EVENTS.c.issue_id == issue_id).order_by(EVENTS.c.id.desc()).limit(1)
            ).scalar()
        return json.loads(payload) if payload else None

    def history(self, issue_id: int) -> list[dict[str, Any]]:
        with self.engine.connect() as connection:
            return states.history(connection, issue_id)

    def event(self, event_id: str) -> dict[str, Any] | None:
        """The stored event as the SDK sent it, with its issue and project."""
        wanted = event_id.replace("-", "").lower()
        with self.engine.connect() as connection:
            row = connection.execute(
                select(EVENTS.c.issue_id, EVENTS.c.project_id, EVENTS.c.received_at, EVENTS.c.payload)
                .where(EVENTS.c.event_id == wanted).order_by(EVENTS.c.id).limit(1)
            ).first()
        if row is None:
            return None
        issue_id, project_id, received_at, payload = row
        return {"issue_id": issue_id, "project_id": project_id, "received_at": received_at, "event": json.loads(payload)}
