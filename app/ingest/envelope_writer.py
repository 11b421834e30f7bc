"""Writes what was read of one envelope (`Readable`, app/ingest/envelope_reader.py) into the inbox,
in the store's write transaction (app/ingest/store.py): the items its project's inbound filters
dropped, counted per filter; its outbox row's body, replaced by its scrubbed copy; its events
(event_writer.py), transactions (trace_writer.py), logs, feedback and client reports (log_writer.py),
sessions (app/releases/session_writer.py), cron check-ins (app/monitors/checkins.py).
"""

from __future__ import annotations

import json

import sqlalchemy
from sqlalchemy import bindparam, update

from app.inbox.tag_index import TagCounts
from app.ingest.event_writer import write_event
from app.ingest.incoming import COUNTED_ITEM_TYPES, EVENT_ITEM_TYPES, Ingested, Readable
from app.ingest.log_writer import add_count, write_counts, write_feedback, write_logs
from app.ingest.trace_writer import write_transaction
from app.monitors.checkins import write_checkin
from app.projects.options_store import FILTERED
from app.releases.session_writer import SESSION_ITEM_TYPES, write_sessions
from reflex_lookout.tables import OUTBOX

# An outbox row's envelope, scrubbed (uncompressed); a rejected row's, dropped.
KEEP_BODY = update(OUTBOX).where(OUTBOX.c.id == bindparam("row_id")).values(
    body=bindparam("new_body"), size=bindparam("new_size"), content_encoding="")


def write_envelope(connection: sqlalchemy.Connection, readable: Readable, tags: TagCounts) -> Ingested:
    """Write what was read of one envelope in `connection`'s transaction: its filtered items' counts,
    its outbox row's scrubbed body, and each item by its type; what was kept of it."""
    result = Ingested()
    project_id, received_at = readable.project_id, readable.received_at
    for name, count in readable.filtered.items():
        add_count(connection, project_id, FILTERED, name, count)
        result.filtered += count
    if readable.body is not None and readable.row_id is not None:
        connection.execute(KEEP_BODY, {"row_id": readable.row_id, "new_body": readable.body,
                                       "new_size": len(readable.body)})
    for item_type, payload, kept_as in readable.items:
        if item_type in EVENT_ITEM_TYPES:
            where = ({"envelope_id": readable.row_id, "item_index": kept_as, "payload": ""} if isinstance(kept_as, int)
                     else {"payload": kept_as if kept_as is not None else json.dumps(payload)})
            added = write_event(connection, project_id, payload, received_at, where, tags)
            result.events += added
            result.duplicates += not added
        elif item_type == "transaction":
            added = write_transaction(connection, project_id, payload, received_at)
            result.transactions += added
            result.duplicates += not added
        elif item_type == "log":
            result.logs += write_logs(connection, project_id, payload)
        elif item_type in ("feedback", "user_report"):
            write_feedback(connection, project_id, item_type, payload, received_at)
            result.feedback += 1
        elif item_type == "check_in":
            result.checkins += write_checkin(connection, project_id, payload, received_at)
        elif item_type in SESSION_ITEM_TYPES:
            write_sessions(connection, project_id, item_type, payload, received_at)
            result.counted += 1
        elif item_type in COUNTED_ITEM_TYPES:
            write_counts(connection, project_id, payload)
            result.counted += 1
        else:
            result.other_items[item_type] = result.other_items.get(item_type, 0) + 1
    return result
