"""The writer of traces: a transaction is stored once per `event_id`, with its trace's ids, name,
operation, status, timing, environment and release in columns and its spans in the payload."""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy
from sqlalchemy import bindparam, insert, select

from app.inbox.grouping import LEVEL_LENGTH
from app.inbox.tables import TRANSACTIONS
from app.ingest.event_writer import ENVIRONMENT_LENGTH, ID_LENGTH, NAME_LENGTH, event_id_of, stored
from app.protocol.fields import cut, listed, mapping, seconds

STORED_TRANSACTION = select(TRANSACTIONS.c.id).where(
    TRANSACTIONS.c.project_id == bindparam("project_id"), TRANSACTIONS.c.event_id == bindparam("event_id"))
INSERT_TRANSACTION = insert(TRANSACTIONS)


def write_transaction(connection: sqlalchemy.Connection, project_id: int, event: dict[str, Any],
                      received_at: float) -> bool:
    """Store the transaction; False if the project has its `event_id` already."""
    event_id = event_id_of(event.get("event_id"))
    if stored(connection, STORED_TRANSACTION, project_id, event_id):
        return False
    contexts = mapping(event.get("contexts"))
    trace = mapping(contexts.get("trace"))
    start = seconds(event.get("start_timestamp")) or 0.0
    end = seconds(event.get("timestamp")) or start
    spans = listed(event.get("spans"))
    connection.execute(INSERT_TRANSACTION, {
        "project_id": project_id, "event_id": event_id, "trace_id": cut(trace.get("trace_id"), ID_LENGTH),
        "span_id": cut(trace.get("span_id"), ID_LENGTH), "parent_span_id": cut(trace.get("parent_span_id"), ID_LENGTH),
        "name": cut(event.get("transaction"), NAME_LENGTH), "op": cut(trace.get("op"), LEVEL_LENGTH),
        "status": cut(trace.get("status"), LEVEL_LENGTH), "platform": cut(event.get("platform"), LEVEL_LENGTH),
        "start": start, "duration_ms": max(0.0, (end - start) * 1000),
        "span_count": len(spans), "received_at": received_at, "payload": json.dumps(event),
        "environment": cut(event.get("environment"), ENVIRONMENT_LENGTH), "release": cut(event.get("release"), NAME_LENGTH),
    })
    return True
