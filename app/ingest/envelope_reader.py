"""Reads an envelope as the outbox keeps it into what the inbox writes of it (`Readable`).

`read_envelope` decodes and parses it, finds its project, counts the items the project's inbound
filters drop, scrubs the others (unless the tunnel or an ingest endpoint did before writing the row:
app/ingest/before_write.py), symbolicates its events and adds the contexts their User-Agent names,
and says how each event is to be kept: where it already is in its outbox row, as a patch beside it
(app/sourcemaps/event_patch.py), or whole; and, when scrubbing changed an item, the envelope as its
row is to keep it. None of it touches the database's write transaction (app/ingest/store.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from app.inbox.tables import MAX_ENVELOPE_BYTES
from app.ingest.inbound_filters import FILTERED_TYPES, dropped_by
from app.ingest.incoming import EVENT_ITEM_TYPES, READ_ITEM_TYPES, Incoming, Readable
from app.ingest.user_agent import add_contexts, contexts_from_user_agent
from app.projects.options_store import ProjectOptionsStore
from app.projects.registry import LOCAL_PROJECT_ID
from app.sourcemaps.event_patch import is_kept_text, kept_text
from app.sourcemaps.symbolicate import Symbolicator
from reflex_lookout.protocol import encodings, envelope, payloads
from reflex_lookout.scrubbing.envelope import FILTERED_BY, SCRUBBED
from reflex_lookout.scrubbing.relay import scrub_item
from reflex_lookout.scrubbing.settings import ScrubbingSettings


def read_envelope(incoming: Incoming, project_for: Callable[[str | None], int],
                  scrubbing_of: Callable[[int], ScrubbingSettings], project_options: ProjectOptionsStore,
                  symbolicator: Symbolicator | None) -> Readable:
    """Parse the envelope, find its project (`project_for` its DSN), scrub its items (with
    `scrubbing_of` that project, filtered by its `project_options`) and symbolicate its events:
    everything but the database writes (so none of it holds the write transaction open)."""
    parsed = envelope.parse(encodings.decode(incoming.body, incoming.content_encoding, MAX_ENVELOPE_BYTES),
                            MAX_ENVELOPE_BYTES)
    project_id = project_for(incoming.dsn or parsed.dsn)
    scrubbing, filters = scrubbing_of(project_id), project_options.filters_of(project_id)
    received_at = time.time() if incoming.received_at is None else incoming.received_at
    items: list[tuple[str, dict[str, Any], int | str | None]] = []
    filtered: dict[str, int] = {}
    scrubbed: list[bytes | None] = []  # per item: its payload as the row is to keep it (None: as sent; b"": none)
    # Filtered and scrubbed before it was written (app/ingest/before_write.py), or a row stored
    # as received by an older Lookout: filtered and scrubbed here.
    written_scrubbed = parsed.headers.get(SCRUBBED) == 1
    for index, item in enumerate(parsed.items):
        if written_scrubbed and isinstance(item.headers.get(FILTERED_BY), str):
            name = str(item.headers[FILTERED_BY])
            filtered[name] = filtered.get(name, 0) + 1
            scrubbed.append(None)
            continue
        if item.type not in READ_ITEM_TYPES:
            items.append((item.type, {}, None))
            scrubbed.append(b"" if scrubbing.scrub_data and not written_scrubbed else None)  # nothing the inbox can scrub
            continue
        sent = payloads.load_object(item.payload)  # refused: too deep, NaN, ... (reflex_lookout/protocol/payloads.py)
        # The filters read the item as sent (a client IP filter needs the IP that scrubbing may remove).
        dropped = not written_scrubbed and item.type in FILTERED_TYPES and dropped_by(item.type, sent, filters)
        if dropped:  # an inbound filter's: counted, never stored (its row keeps its type, nothing else)
            filtered[dropped] = filtered.get(dropped, 0) + 1
            scrubbed.append(b"")
            continue
        payload = sent if written_scrubbed else scrub_item(item.type, sent, scrubbing, item.payload)
        scrubbed.append(None if payload is sent else json.dumps(payload).encode())
        kept_as: int | str | None = None
        if item.type in EVENT_ITEM_TYPES:
            sent_with_id = "event_id" in payload
            payload.setdefault("event_id", parsed.event_id)
            frames = None if symbolicator is None else symbolicator.symbolicated(
                payload, by_path=project_id == LOCAL_PROJECT_ID, project_id=project_id,
                dev_servers=project_options.dev_servers_of(project_id))
            added = contexts_from_user_agent(payload)  # browser, os, device: app/ingest/user_agent.py
            add_contexts(payload, added)
            as_sent = scrubbed[-1] or item.payload
            changed = frames is not None or bool(added)
            if changed and incoming.row_id is not None:
                # The mapped frames and the parsed contexts are what the console shows: kept as a
                # patch beside the event as sent (app/sourcemaps/event_patch.py), not a new copy.
                kept_as = kept_text(as_sent.decode(json.detect_encoding(as_sent)),
                                    None if sent_with_id else payload["event_id"], frames, added)
            elif changed:
                kept_as = json.dumps(payload)  # not from the outbox (`ingest_envelope`): whole
            elif sent_with_id:
                # Kept as sent (and scrubbed), where it already is when it came through the outbox (a
                # second copy of a 50 KB event cost more than the rest of its ingest); else as its text
                # (unless it reads as a kept patch: then as JSON, which never does).
                text = as_sent.decode("utf-8", "replace")
                kept_as = index if incoming.row_id is not None else json.dumps(payload) if is_kept_text(text) else text
        items.append((item.type, payload, kept_as))
    body = _rewritten(parsed, scrubbed) if any(new is not None for new in scrubbed) else None
    return Readable(project_id, received_at, incoming.row_id, items, filtered, body)


def _rewritten(parsed: envelope.Envelope, scrubbed: list[bytes | None]) -> bytes:
    """The envelope with each item's payload replaced where one is given (b"": the item keeps its
    type alone)."""
    return envelope.serialize(envelope.Envelope(parsed.headers, tuple(
        item if new is None else envelope.Item(item.type, {} if new == b"" else item.headers, new)
        for item, new in zip(parsed.items, scrubbed, strict=True))))
