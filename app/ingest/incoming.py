"""What the inbox's writer takes in and gives back: an envelope as the outbox keeps it (`Incoming`),
parsed and matched to its project (`Readable`), what was kept of it (`Ingested`), and which errors
are the envelope's own problem rather than the database's (`its_own_fault`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sqlalchemy

from reflex_lookout.protocol import encodings, envelope

EVENT_ITEM_TYPES = ("event",)
COUNTED_ITEM_TYPES = ("session", "sessions", "client_report")
READ_ITEM_TYPES = (*EVENT_ITEM_TYPES, "transaction", "log", "feedback", "user_report", *COUNTED_ITEM_TYPES, "check_in")


class UnknownProject(Exception):
    """The envelope names no DSN of a project of this inbox."""


# What keeps an envelope out of the inbox for good (so it is rejected, not retried). Any other
# exception while reading or writing one envelope is its own problem too (`its_own_fault`).
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


@dataclass
class Readable:
    """An envelope parsed, matched to its project and scrubbed, with its items: (type, payload, where
    the event is kept: its item's index in the outbox row `row_id` when kept as sent there, or its
    text; None if not); what the project's inbound filters dropped (app/ingest/inbound_filters.py);
    `body`: the envelope the row is to keep from now on, scrubbed (None: the row's as it is)."""
    project_id: int
    received_at: float
    row_id: int | None
    items: list[tuple[str, dict[str, Any], int | str | None]]
    filtered: dict[str, int] = field(default_factory=dict)  # items an inbound filter dropped, by filter
    body: bytes | None = None


@dataclass
class Ingested:
    events: int = 0  # new events stored
    duplicates: int = 0  # events or transactions whose event_id was already stored
    transactions: int = 0
    logs: int = 0
    feedback: int = 0
    counted: int = 0  # session items (app/releases/) and client reports
    checkins: int = 0  # cron monitors' check-ins kept (app/monitors/checkins.py)
    filtered: int = 0  # events and transactions an inbound filter dropped (counted, not stored)
    other_items: dict[str, int] = field(default_factory=dict)  # item types not read (yet)


def its_own_fault(exc: Exception) -> bool:
    """Whether `exc`, raised while keeping one envelope, is that envelope's problem (it is set aside),
    rather than the database's (locked, away: everything waits and is tried again)."""
    if isinstance(exc, sqlalchemy.exc.SQLAlchemyError):
        return isinstance(exc, (sqlalchemy.exc.IntegrityError, sqlalchemy.exc.DataError))
    return True
