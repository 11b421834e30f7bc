"""The embedded inbox's storage: projects, issues and events in the app's database.

`ingest_batch` (and `ingest_envelope`, one at a time) takes envelopes exactly as the tunnel stored
them (body and content encoding), finds the project from the DSN in the header, and keeps each
error or message event (grouped into an issue, app/inbox/grouping.py), each transaction with its
spans, each log line and each piece of feedback, and counts session updates and client reports;
events and transactions once per `event_id`. An event that came through the outbox is kept where
it is, in its envelope's row (`kept_events` in app/inbox/reading.py reads it back); so are the item
types the inbox does not read (attachments, replays, ...).
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy
from sqlalchemy import bindparam, case, insert, select, update

from app.inbox import eviction, payloads, states
from app.inbox.fields import cut, seconds, text
from app.inbox.grouping import CULPRIT_LENGTH, LEVEL_LENGTH, group
from app.inbox.reading import InboxReader, TraceReader  # noqa: F401 (imported from here too)
from app.inbox.tables import (  # noqa: F401 (imported from here too)
    COUNTS, EVENTS, FEEDBACK, ISSUES, LOGS, MAX_ENVELOPE_BYTES, PROJECTS, READ, TRANSACTIONS, chunks,
)
from app.monitoring import encodings, envelope
from app.monitoring.settings import Dsn

logger = logging.getLogger(__name__)
SESSION_STATUSES = ("exited", "errored", "crashed", "abnormal")
EVENT_ITEM_TYPES = ("event",)
COUNTED_ITEM_TYPES = ("session", "sessions", "client_report")
READ_ITEM_TYPES = (*EVENT_ITEM_TYPES, "transaction", "log", "feedback", "user_report", *COUNTED_ITEM_TYPES)
# Fields kept in columns, cut at Relay's limits (relay-event-schema `MaxChars`), as grouping does:
# they are listed, filtered on and shown. A release or transaction name: 200; an environment: 64;
# a platform, operation, status or level: 128; trace and span ids (32 and 16 hex digits): 64.
NAME_LENGTH, ENVIRONMENT_LENGTH, ID_LENGTH = CULPRIT_LENGTH, 64, 64

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


# What keeps an envelope out of the inbox for good (so it is rejected, not retried). Any other
# exception while reading or writing one envelope is its own problem too (`_its_own_fault`).
READ_ERRORS = (UnknownProject, envelope.EnvelopeError, encodings.DecodeError, ValueError)


@dataclass(frozen=True)
class Incoming:
    """An envelope as the outbox keeps it: its body, content encoding, when it arrived, and the
    DSN it was accepted for (which names its project: a key changed since, by migration 0011, is
    changed there too); `row_id` is its outbox row."""
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
        """Keep the envelope's events; `dsn`, the DSN it was accepted for (an outbox row records it),
        names the project, else the envelope header's does (sentry-sdk puts none there)."""
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
            except Exception as exc:
                if not _its_own_fault(exc):
                    raise
                read.append(exc)
        try:
            with self.engine.begin() as connection:
                results = [self._write(connection, r) if isinstance(r, Readable) else r for r in read]
                if then is not None:
                    then(connection, batch, results)
                return results
        except Exception as exc:
            if not _its_own_fault(exc):
                raise
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
        project_id = self.project_for(incoming.dsn or parsed.dsn)
        received_at = time.time() if incoming.received_at is None else incoming.received_at
        items: list[tuple[str, dict[str, Any], int | str | None]] = []
        for index, item in enumerate(parsed.items):
            if item.type not in READ_ITEM_TYPES:
                items.append((item.type, {}, None))
                continue
            payload = payloads.load_object(item.payload)  # refused: too deep, NaN, ... (app/inbox/payloads.py)
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
        release = cut(event.get("release"), NAME_LENGTH)
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
            "platform": cut(event.get("platform"), LEVEL_LENGTH), "environment": cut(event.get("environment"), ENVIRONMENT_LENGTH),
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
            "project_id": project_id, "event_id": event_id, "trace_id": cut(trace.get("trace_id"), ID_LENGTH),
            "span_id": cut(trace.get("span_id"), ID_LENGTH), "parent_span_id": cut(trace.get("parent_span_id"), ID_LENGTH),
            "name": cut(event.get("transaction"), NAME_LENGTH), "op": cut(trace.get("op"), LEVEL_LENGTH),
            "status": cut(trace.get("status"), LEVEL_LENGTH), "platform": cut(event.get("platform"), LEVEL_LENGTH), "start": start, "duration_ms": max(0.0, (end - start) * 1000),
            "span_count": len(spans), "received_at": received_at, "payload": json.dumps(event),
        })
        return True

    def _ingest_logs(self, connection: sqlalchemy.Connection, project_id: int, batch: dict[str, Any]) -> int:
        items = batch.get("items") if isinstance(batch.get("items"), list) else []
        rows = [{
            "project_id": project_id, "timestamp": seconds(item.get("timestamp")) or 0.0,
            "level": cut(item.get("level"), LEVEL_LENGTH) or "info", "body": text(item.get("body")),
            "trace_id": cut(item.get("trace_id"), ID_LENGTH),
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


def _stored(connection: sqlalchemy.Connection, statement: sqlalchemy.Select, project_id: int, event_id: str) -> bool:
    """Whether the project already has this event (or transaction) id (STORED_EVENT, STORED_TRANSACTION)."""
    return connection.execute(statement, {"project_id": project_id, "event_id": event_id}).first() is not None


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


def _its_own_fault(exc: Exception) -> bool:
    """Whether `exc`, raised while keeping one envelope, is that envelope's problem (it is set aside),
    rather than the database's (locked, away: everything waits and is tried again)."""
    if isinstance(exc, sqlalchemy.exc.SQLAlchemyError):
        return isinstance(exc, (sqlalchemy.exc.IntegrityError, sqlalchemy.exc.DataError))
    return True
