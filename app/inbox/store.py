"""The embedded inbox's storage: projects, issues and events in the app's database.

`ingest_batch` (and `ingest_envelope`, one at a time) takes envelopes exactly as the tunnel stored
them (body and content encoding), finds the project from the DSN in the header, and keeps each
error or message event (grouped into an issue, app/inbox/grouping.py), each transaction with its
spans, each log line and each piece of feedback, and counts session updates and client reports;
events and transactions once per `event_id`. An event that came through the outbox is kept where
it is, in its envelope's row (`kept_events` reads it back); so are the item types the inbox does
not read (attachments, replays, ...).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy
from sqlalchemy import bindparam, case, insert, select, update

from app.inbox import states
from app.inbox.fields import seconds, text
from app.inbox.grouping import group
from app.inbox.present import tag_rows
from app.models import (
    InboxCount, InboxEvent, InboxFeedback, InboxIssue, InboxLog, InboxProject, InboxRead, InboxTransaction,
)
from app.monitoring import encodings, envelope
from app.monitoring.outbox import TABLE as OUTBOX
from app.monitoring.settings import Dsn

logger = logging.getLogger(__name__)
PROJECTS = InboxProject.__table__
ISSUES = InboxIssue.__table__
EVENTS = InboxEvent.__table__
READ = InboxRead.__table__
TRANSACTIONS = InboxTransaction.__table__
LOGS = InboxLog.__table__
FEEDBACK = InboxFeedback.__table__
COUNTS = InboxCount.__table__
SESSION_STATUSES = ("exited", "errored", "crashed", "abnormal")
MAX_ENVELOPE_BYTES = 100 * 1024 * 1024
EVENT_ITEM_TYPES = ("event",)
COUNTED_ITEM_TYPES = ("session", "sessions", "client_report")
READ_ITEM_TYPES = (*EVENT_ITEM_TYPES, "transaction", "log", "feedback", "user_report", *COUNTED_ITEM_TYPES)

# The statements of the ingest path, built once: building them per call cost more than running them.
STORED_EVENT = select(EVENTS.c.id).where(
    EVENTS.c.project_id == bindparam("project_id"), EVENTS.c.event_id == bindparam("event_id"))
STORED_TRANSACTION = select(TRANSACTIONS.c.id).where(
    TRANSACTIONS.c.project_id == bindparam("project_id"), TRANSACTIONS.c.event_id == bindparam("event_id"))
FIND_PROJECT = select(PROJECTS.c.id).where(
    PROJECTS.c.id == bindparam("id"), PROJECTS.c.public_key == bindparam("public_key"))
FIND_ISSUE = select(ISSUES.c.id, ISSUES.c.status, ISSUES.c.resolved_in_release).where(
    ISSUES.c.project_id == bindparam("project_id"), ISSUES.c.fingerprint == bindparam("fingerprint"))
INSERT_ISSUE = insert(ISSUES)
COUNT_EVENT = update(ISSUES).where(ISSUES.c.id == bindparam("issue_id")).values(
    last_seen=case((ISSUES.c.last_seen > bindparam("received_at"), ISSUES.c.last_seen), else_=bindparam("received_at")),
    event_count=ISSUES.c.event_count + 1, last_event_id=bindparam("new_event_id"), level=bindparam("new_level"),
)
INSERT_EVENT = insert(EVENTS)
INSERT_TRANSACTION = insert(TRANSACTIONS)


class UnknownProject(Exception):
    """The envelope names no DSN of a project of this inbox."""


# What keeps an envelope out of the inbox for good (so it is rejected, not retried).
READ_ERRORS = (UnknownProject, envelope.EnvelopeError, encodings.DecodeError, ValueError)


@dataclass(frozen=True)
class Incoming:
    """An envelope as the outbox keeps it: its body, content encoding, when it arrived, and the
    DSN it came with (for envelopes whose header names none); `row_id` is its outbox row."""
    body: bytes
    content_encoding: str = ""
    received_at: float | None = None
    dsn: str | None = None
    row_id: int | None = None


Then = Callable[[sqlalchemy.Connection, Sequence[Incoming], list["Ingested | Exception"]], None]


@dataclass
class Readable:
    """An envelope parsed and matched to its project, with its items: (type, payload, where the
    event is kept as sent: its item's index in the outbox row `row_id`, or its text; None if not)."""
    project_id: int
    received_at: float
    row_id: int | None
    items: list[tuple[str, dict[str, Any], int | str | None]]


@dataclass
class Ingested:
    events: int = 0  # new events stored
    duplicates: int = 0  # events or transactions whose event_id was already stored
    transactions: int = 0
    logs: int = 0
    feedback: int = 0
    counted: int = 0  # session updates and client reports
    other_items: dict[str, int] = field(default_factory=dict)  # item types not read (yet)


class InboxStore:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine
        self._projects: dict[tuple[int, str], int] = {}

    def ensure_project(self, dsn: Dsn, name: str = "Lookout") -> int:
        """The project of `dsn` (its id and public key), created if missing."""
        project_id = int(dsn.project_id)
        key = select(PROJECTS.c.public_key).where(PROJECTS.c.id == project_id)
        # IntegrityError: another worker, starting at the same time, made it first.
        with contextlib.suppress(sqlalchemy.exc.IntegrityError), self.engine.begin() as connection:
            if connection.execute(key).first() is None:
                connection.execute(insert(PROJECTS).values(
                    id=project_id, name=name, public_key=dsn.public_key, created_at=time.time(),
                ))
        with self.engine.connect() as connection:
            found = connection.execute(key).scalar()
        if found is None:  # the insert was refused: the key is another project's
            raise ValueError(f"project {project_id} could not be made with {dsn}: another project has its key")
        if found != dsn.public_key:
            raise ValueError(f"project {project_id} exists with another public key than {dsn}")
        return project_id

    def project_for(self, dsn_text: str | None) -> int:
        if not dsn_text:
            raise UnknownProject("The envelope names no DSN.")
        dsn = Dsn.parse(dsn_text)
        key = (int(dsn.project_id), dsn.public_key)
        if key not in self._projects:  # projects are never deleted, so a hit stays true
            with self.engine.connect() as connection:
                found = connection.execute(FIND_PROJECT, {"id": key[0], "public_key": key[1]}).scalar()
            if found is None:
                raise UnknownProject(f"No project of this inbox has the DSN {dsn}.")
            self._projects[key] = int(found)
        return self._projects[key]

    def ingest_envelope(self, body: bytes, content_encoding: str = "", received_at: float | None = None,
                        dsn: str | None = None) -> Ingested:
        """Keep the envelope's events; `dsn` names the project when the envelope's header does not
        (sentry-sdk puts none there; the outbox row records which DSN it came with)."""
        result = self.ingest_batch([Incoming(body, content_encoding, received_at, dsn)])[0]
        if isinstance(result, Exception):
            raise result
        return result

    def ingest_batch(self, batch: Sequence[Incoming], then: Then | None = None) -> list[Ingested | Exception]:
        """Keep each envelope of `batch`, in one transaction: per envelope, what was kept, or the
        error that kept it out (an unreadable envelope, an unknown project, a row the database
        refused). If writing one fails, each envelope is tried again in a transaction of its own,
        so one cannot sink the others. `then(connection, envelopes, results)` runs in the same
        transaction (the feeder marks its outbox rows read there, so none is read twice).
        Other database errors (locked, away) propagate, and nothing of the batch is kept."""
        read: list[Readable | Exception] = []
        for incoming in batch:
            try:
                read.append(self._read(incoming))
            except READ_ERRORS as exc:
                read.append(exc)
        try:
            with self.engine.begin() as connection:
                results = [self._write(connection, r) if isinstance(r, Readable) else r for r in read]
                if then is not None:
                    then(connection, batch, results)
                return results
        except (sqlalchemy.exc.IntegrityError, *READ_ERRORS) as exc:
            if len(batch) > 1:
                return [one for incoming in batch for one in self.ingest_batch([incoming], then)]
            if then is not None:
                with self.engine.begin() as connection:
                    then(connection, batch, [exc])
            return [exc]

    def _read(self, incoming: Incoming) -> Readable:
        """Parse the envelope and find its project: everything but the database writes."""
        parsed = envelope.parse(encodings.decode(incoming.body, incoming.content_encoding, MAX_ENVELOPE_BYTES),
                                MAX_ENVELOPE_BYTES)
        project_id = self.project_for(parsed.dsn or incoming.dsn)
        received_at = time.time() if incoming.received_at is None else incoming.received_at
        items: list[tuple[str, dict[str, Any], int | str | None]] = []
        for index, item in enumerate(parsed.items):
            if item.type not in READ_ITEM_TYPES:
                items.append((item.type, {}, None))
                continue
            payload = _object(item.payload)
            kept_as: int | str | None = None
            if item.type in EVENT_ITEM_TYPES:
                if "event_id" in payload:
                    # Kept as sent, where it already is when it came through the outbox (a second copy
                    # of a 50 KB event cost more than the rest of its ingest); else as its text.
                    kept_as = index if incoming.row_id is not None else item.payload.decode("utf-8", "replace")
                payload.setdefault("event_id", parsed.event_id)
            items.append((item.type, payload, kept_as))
        return Readable(project_id, received_at, incoming.row_id, items)

    def _write(self, connection: sqlalchemy.Connection, readable: Readable) -> Ingested:
        result = Ingested()
        project_id, received_at = readable.project_id, readable.received_at
        for item_type, payload, kept_as in readable.items:
            if item_type in EVENT_ITEM_TYPES:
                where = ({"envelope_id": readable.row_id, "item_index": kept_as, "payload": ""} if isinstance(kept_as, int)
                         else {"payload": kept_as if kept_as is not None else json.dumps(payload)})
                added = self._ingest_event(connection, project_id, payload, received_at, where)
                result.events += added
                result.duplicates += not added
            elif item_type == "transaction":
                added = self._ingest_transaction(connection, project_id, payload, received_at)
                result.transactions += added
                result.duplicates += not added
            elif item_type == "log":
                result.logs += self._ingest_logs(connection, project_id, payload)
            elif item_type in ("feedback", "user_report"):
                self._ingest_feedback(connection, project_id, item_type, payload, received_at)
                result.feedback += 1
            elif item_type in COUNTED_ITEM_TYPES:
                for kind, key, count in _counts(item_type, payload):
                    self._count(connection, project_id, kind, key, count)
                result.counted += 1
            else:
                result.other_items[item_type] = result.other_items.get(item_type, 0) + 1
        return result

    def _ingest_event(self, connection: sqlalchemy.Connection, project_id: int, event: dict[str, Any],
                      received_at: float, kept: dict[str, Any]) -> bool:
        """`kept`: where the event is kept as sent (its `payload`, or its `envelope_id` and `item_index`)."""
        event_id = _event_id(event.get("event_id"))
        if _stored(connection, STORED_EVENT, project_id, event_id):
            return False
        grouped = group(event)
        release = text(event.get("release"))
        found = connection.execute(FIND_ISSUE, {"project_id": project_id, "fingerprint": grouped.fingerprint}).first()
        issue_id = found[0] if found else None
        if found is None:
            issue_id = connection.execute(INSERT_ISSUE, {
                "project_id": project_id, "fingerprint": grouped.fingerprint, "title": grouped.title,
                "culprit": grouped.culprit, "level": grouped.level, "kind": grouped.kind, "status": states.UNRESOLVED,
                "resolved_in_release": "", "first_seen": received_at, "last_seen": received_at, "event_count": 1,
                "last_event_id": event_id,
            }).inserted_primary_key[0]
        else:
            connection.execute(COUNT_EVENT, {"issue_id": issue_id, "received_at": received_at,
                                             "new_event_id": event_id, "new_level": grouped.level})
            states.after_new_event(connection, issue_id, found[1], found[2], release, event_id)
        connection.execute(INSERT_EVENT, {
            "project_id": project_id, "issue_id": issue_id, "event_id": event_id, "received_at": received_at,
            "timestamp": seconds(event.get("timestamp")), "level": grouped.level,
            "platform": text(event.get("platform")), "environment": text(event.get("environment")),
            "release": release, "title": grouped.title, "envelope_id": None, "item_index": None, **kept,
        })
        return True

    def _ingest_transaction(self, connection: sqlalchemy.Connection, project_id: int, event: dict[str, Any],
                            received_at: float) -> bool:
        event_id = _event_id(event.get("event_id"))
        if _stored(connection, STORED_TRANSACTION, project_id, event_id):
            return False
        contexts = event.get("contexts") if isinstance(event.get("contexts"), dict) else {}
        trace = contexts.get("trace") if isinstance(contexts.get("trace"), dict) else {}
        start = seconds(event.get("start_timestamp")) or 0.0
        end = seconds(event.get("timestamp")) or start
        spans = event.get("spans") if isinstance(event.get("spans"), list) else []
        connection.execute(INSERT_TRANSACTION, {
            "project_id": project_id, "event_id": event_id, "trace_id": text(trace.get("trace_id")),
            "span_id": text(trace.get("span_id")), "parent_span_id": text(trace.get("parent_span_id")),
            "name": text(event.get("transaction")), "op": text(trace.get("op")), "status": text(trace.get("status")),
            "platform": text(event.get("platform")), "start": start, "duration_ms": max(0.0, (end - start) * 1000),
            "span_count": len(spans), "received_at": received_at, "payload": json.dumps(event),
        })
        return True

    def _ingest_logs(self, connection: sqlalchemy.Connection, project_id: int, batch: dict[str, Any]) -> int:
        items = batch.get("items") if isinstance(batch.get("items"), list) else []
        rows = [{
            "project_id": project_id, "timestamp": seconds(item.get("timestamp")) or 0.0,
            "level": text(item.get("level")) or "info", "body": text(item.get("body")),
            "trace_id": text(item.get("trace_id")),
            "attributes": json.dumps(item.get("attributes") if isinstance(item.get("attributes"), dict) else {}),
        } for item in items if isinstance(item, dict)]
        if rows:
            connection.execute(insert(LOGS), rows)
        return len(rows)

    def _ingest_feedback(self, connection: sqlalchemy.Connection, project_id: int, kind: str,
                         payload: dict[str, Any], received_at: float) -> None:
        if kind == "feedback":
            contexts = payload.get("contexts") if isinstance(payload.get("contexts"), dict) else {}
            found = contexts.get("feedback") if isinstance(contexts.get("feedback"), dict) else {}
            values = (found.get("associated_event_id"), found.get("name"), found.get("contact_email"), found.get("message"))
        else:  # the older user_report
            values = (payload.get("event_id"), payload.get("name"), payload.get("email"), payload.get("comments"))
        event_id, name, email, message = (text(v) for v in values)
        connection.execute(insert(FEEDBACK).values(
            project_id=project_id, received_at=received_at, event_id=event_id.replace("-", "").lower(),
            name=name, email=email, message=message,
        ))

    def _count(self, connection: sqlalchemy.Connection, project_id: int, kind: str, key: str, count: int) -> None:
        if count <= 0:
            return
        where = (COUNTS.c.project_id == project_id, COUNTS.c.kind == kind, COUNTS.c.key == key)
        if connection.execute(update(COUNTS).where(*where).values(count=COUNTS.c.count + count)).rowcount == 0:
            connection.execute(insert(COUNTS).values(project_id=project_id, kind=kind, key=key, count=count))

    def delete_issue(self, issue_id: int, actor: str) -> int:
        """Delete the issue with its stored events, their feedback and its history; how many events
        went. The envelopes they were stored in go at retention's next pass. An event with the same
        fingerprint later starts a new issue. `StateError` if there is no such issue."""
        with self.engine.begin() as connection:
            if connection.execute(select(ISSUES.c.id).where(ISSUES.c.id == issue_id)).first() is None:
                raise states.StateError(f"There is no issue {issue_id}.")
            event_ids = select(EVENTS.c.event_id).where(EVENTS.c.issue_id == issue_id).scalar_subquery()
            connection.execute(sqlalchemy.delete(FEEDBACK).where(FEEDBACK.c.event_id.in_(event_ids)))
            events = connection.execute(sqlalchemy.delete(EVENTS).where(EVENTS.c.issue_id == issue_id)).rowcount
            connection.execute(sqlalchemy.delete(states.CHANGES).where(states.CHANGES.c.issue_id == issue_id))
            connection.execute(sqlalchemy.delete(ISSUES).where(ISSUES.c.id == issue_id))
        logger.info("issue %d deleted by %s with %d stored events", issue_id, actor, events)
        return int(events or 0)

    def change_status(self, issue_id: int, to_status: str, actor: str, in_next_release: bool = False) -> str:
        """Move an issue to another status (see app/inbox/states.py); the status it had."""
        with self.engine.begin() as connection:
            return states.change(connection, issue_id, to_status, actor, in_next_release)



def _stored(connection: sqlalchemy.Connection, statement: sqlalchemy.Select, project_id: int, event_id: str) -> bool:
    """Whether the project already has this event (or transaction) id (STORED_EVENT, STORED_TRANSACTION)."""
    return connection.execute(statement, {"project_id": project_id, "event_id": event_id}).first() is not None


def chunks(ids: Sequence[int], size: int = 500) -> Iterator[Sequence[int]]:
    """`ids` in slices of `size`, for `IN (...)` lists that stay under the drivers' parameter limits."""
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def _event_id(value: Any) -> str:
    found = str(value or "").replace("-", "").lower()
    return found if len(found) == 32 and all(c in "0123456789abcdef" for c in found) else uuid.uuid4().hex


def _counts(item_type: str, payload: dict[str, Any]) -> list[tuple[str, str, int]]:
    """(kind, key, count) for a session update, session aggregates or a client report."""
    if item_type == "client_report":
        discarded = payload.get("discarded_events") if isinstance(payload.get("discarded_events"), list) else []
        return [("discarded", f"{text(d.get('category'))}|{text(d.get('reason'))}", _whole(d.get("quantity")))
                for d in discarded if isinstance(d, dict)]
    attrs = payload.get("attrs") if isinstance(payload.get("attrs"), dict) else {}
    where = f"{text(attrs.get('release'))}|{text(attrs.get('environment'))}"
    if item_type == "session":
        return [("session", f"{where}|{text(payload.get('status')) or 'ok'}", 1)]
    aggregates = payload.get("aggregates") if isinstance(payload.get("aggregates"), list) else []
    return [("session", f"{where}|{status}", _whole(a.get(status)))
            for a in aggregates if isinstance(a, dict) for status in SESSION_STATUSES]


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _object(payload: bytes) -> dict[str, Any]:
    value = json.loads(payload)
    if not isinstance(value, dict):
        raise envelope.EnvelopeError(400, "An item's payload is not a JSON object.")
    return value


ISSUE_COLUMNS = (
    ISSUES.c.id, ISSUES.c.project_id, ISSUES.c.title, ISSUES.c.culprit, ISSUES.c.level, ISSUES.c.kind,
    ISSUES.c.status, ISSUES.c.resolved_in_release, ISSUES.c.first_seen, ISSUES.c.last_seen, ISSUES.c.event_count,
    ISSUES.c.last_event_id,
)


class InboxReader:
    """Read access to the inbox (the JSON API and the console pages)."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def issues(self, status: str | None = None, limit: int = 50, offset: int = 0, search: str = "",
               level: str = "", environment: str = "", release: str = "",
               sort: str = "last_seen", project: int | None = None) -> tuple[list[dict[str, Any]], int]:
        """Issues, most recently seen first (or most events first: `sort="count"`), and how many
        match in all. `status` "open" means unresolved or regressed; `search` matches title or
        culprit (case-insensitive); `environment` and `release` match issues with such an event;
        `project` keeps one project's."""
        condition = sqlalchemy.true() if project is None else ISSUES.c.project_id == project
        if level:
            condition = condition & (ISSUES.c.level == level)
        for column, wanted in ((EVENTS.c.environment, environment), (EVENTS.c.release, release)):
            if wanted:
                condition = condition & ISSUES.c.id.in_(select(EVENTS.c.issue_id).where(column == wanted))
        if status == "open":
            condition = condition & ISSUES.c.status.in_(states.OPEN)
        elif status:
            condition = condition & (ISSUES.c.status == status)
        if search.strip():
            pattern = f"%{search.strip().lower()}%"
            condition = condition & (sqlalchemy.func.lower(ISSUES.c.title).like(pattern)
                                     | sqlalchemy.func.lower(ISSUES.c.culprit).like(pattern))
        with self.engine.connect() as connection:
            total = connection.execute(select(sqlalchemy.func.count()).select_from(ISSUES).where(condition)).scalar_one()
            rows = connection.execute(
                select(*ISSUE_COLUMNS).where(condition)
                .order_by(ISSUES.c.event_count.desc() if sort == "count" else ISSUES.c.last_seen.desc(), ISSUES.c.id.desc())
                .limit(limit).offset(offset)
            ).mappings().all()
        return [dict(row) for row in rows], int(total)

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

    def feedback(self, issue_id: int, limit: int = 50) -> list[dict[str, Any]]:
        """What users wrote about the issue's stored events, newest first."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(FEEDBACK.c.received_at, FEEDBACK.c.name, FEEDBACK.c.email, FEEDBACK.c.message)
                .where(FEEDBACK.c.event_id.in_(select(EVENTS.c.event_id).where(EVENTS.c.issue_id == issue_id)))
                .order_by(FEEDBACK.c.id.desc()).limit(limit)
            ).mappings().all()
        return [dict(row) for row in rows]

    def counts(self, kind: str) -> dict[str, int]:
        """Session updates ("session": "release|environment|status") or discards ("discarded":
        "category|reason"), summed over projects."""
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(COUNTS.c.key, sqlalchemy.func.sum(COUNTS.c.count)).where(COUNTS.c.kind == kind).group_by(COUNTS.c.key)
            ).all()
        return {key: int(total) for key, total in rows}

    def tag_breakdown(self, issue_id: int, recent: int = 500, top: int = 5) -> list[tuple[str, str]]:
        """For each tag of the issue's `recent` latest events: its `top` values with their share,
        as (tag, "value 60 % · other 40 %") rows."""
        with self.engine.connect() as connection:
            events = kept_events(connection, connection.execute(
                select(*KEPT).where(EVENTS.c.issue_id == issue_id).order_by(EVENTS.c.id.desc()).limit(recent)
            ).all())
        values: dict[str, Counter[str]] = {}
        for event in events:
            for key, value in tag_rows(event or {}):
                values.setdefault(key, Counter())[value] += 1
        rows = []
        for key in sorted(values):
            counted = values[key]
            total = sum(counted.values())
            rows.append((key, " · ".join(f"{value} {count * 100 // total} %" for value, count in counted.most_common(top))))
        return rows

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


def kept_events(connection: sqlalchemy.Connection,
                rows: Sequence[Sequence[Any]]) -> list[dict[str, Any] | None]:
    """The events of `rows` of KEPT, as sent: from their own payload or their envelope's outbox row
    (None for one whose row is gone, which retention does not do while an event refers to it)."""
    wanted = sorted({row[1] for row in rows if not row[0] and row[1] is not None})
    envelopes: dict[int, envelope.Envelope] = {}
    for chunk in chunks(wanted):
        for row_id, body, encoding in connection.execute(
            select(OUTBOX.c.id, OUTBOX.c.body, OUTBOX.c.content_encoding).where(OUTBOX.c.id.in_(chunk))
        ):
            envelopes[row_id] = envelope.parse(encodings.decode(body, encoding, MAX_ENVELOPE_BYTES), MAX_ENVELOPE_BYTES)
    events: list[dict[str, Any] | None] = []
    for payload, envelope_id, item_index in rows:
        if payload:
            events.append(json.loads(payload))
        elif envelope_id in envelopes and item_index is not None and item_index < len(envelopes[envelope_id].items):
            events.append(_object(envelopes[envelope_id].items[item_index].payload))
        else:
            events.append(None)
    return events


TRANSACTION_COLUMNS = (
    TRANSACTIONS.c.id, TRANSACTIONS.c.event_id, TRANSACTIONS.c.trace_id, TRANSACTIONS.c.name, TRANSACTIONS.c.op,
    TRANSACTIONS.c.status, TRANSACTIONS.c.platform, TRANSACTIONS.c.start, TRANSACTIONS.c.duration_ms,
    TRANSACTIONS.c.span_count, TRANSACTIONS.c.received_at,
)


class TraceReader:
    """Read access to transactions (traces) and log lines."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def transactions(self, limit: int = 50, offset: int = 0, search: str = "") -> tuple[list[dict[str, Any]], int]:
        """Transactions, newest first, and how many match (`search`: in the name or op)."""
        condition = sqlalchemy.true()
        if search.strip():
            pattern = f"%{search.strip().lower()}%"
            condition = (sqlalchemy.func.lower(TRANSACTIONS.c.name).like(pattern)
                         | sqlalchemy.func.lower(TRANSACTIONS.c.op).like(pattern))
        with self.engine.connect() as connection:
            total = connection.execute(
                select(sqlalchemy.func.count()).select_from(TRANSACTIONS).where(condition)
            ).scalar_one()
            rows = connection.execute(
                select(*TRANSACTION_COLUMNS).where(condition)
                .order_by(TRANSACTIONS.c.id.desc()).limit(limit).offset(offset)
            ).mappings().all()
        return [dict(row) for row in rows], int(total)

    def trace(self, trace_id: str) -> list[dict[str, Any]]:
        """Every stored transaction of the trace, as sent (spans included), earliest first."""
        with self.engine.connect() as connection:
            payloads = connection.execute(
                select(TRANSACTIONS.c.payload).where(TRANSACTIONS.c.trace_id == trace_id.lower())
                .order_by(TRANSACTIONS.c.start)
            ).scalars().all()
        return [json.loads(payload) for payload in payloads]

    def logs(self, limit: int = 200, level: str = "", search: str = "") -> list[dict[str, Any]]:
        """Log lines, newest first (`level`: exactly; `search`: in the body)."""
        condition = sqlalchemy.true()
        if level:
            condition = condition & (LOGS.c.level == level)
        if search.strip():
            condition = condition & sqlalchemy.func.lower(LOGS.c.body).like(f"%{search.strip().lower()}%")
        with self.engine.connect() as connection:
            rows = connection.execute(
                select(LOGS.c.id, LOGS.c.timestamp, LOGS.c.level, LOGS.c.body, LOGS.c.trace_id, LOGS.c.attributes)
                .where(condition).order_by(LOGS.c.id.desc()).limit(limit)
            ).mappings().all()
        return [dict(row) for row in rows]
