"""The embedded inbox's writer: projects, and envelopes read into issues, events, traces and logs.

`ingest_batch` (and `ingest_envelope`, one at a time) takes envelopes as the outbox keeps them
(body and content encoding), finds the project from the DSN they were accepted for, and keeps each
error or message event (symbolicated, app/sourcemaps/symbolicate.py, given the browser, os and
device its User-Agent names, user_agent.py, then grouped into an issue: app/ingest/event_writer.py),
each transaction with its spans (trace_writer.py), each log line and each piece of feedback, and
counts session updates and client reports (log_writer.py); events and transactions once per
`event_id`, and the events and transactions the project's inbound filters dropped, per filter
(`inbox_count`, kind "filtered"). An event that came through the outbox is kept where it is, in its
envelope's row (`kept_events` in app/inbox/reading.py reads it back), unless symbolication or its
User-Agent changed it: then it is kept as sent with a patch of the changes (app/sourcemaps/event_patch.py).

The tunnel and the ingest endpoints filter and scrub an envelope before they write it
(app/ingest/before_write.py; its header says so), and such a row is read as it is: a filtered item
is there as its type and the filter's name. A row stored as received (by a Lookout before that
change, or through `ingest_envelope`) is filtered and scrubbed here first (reflex_lookout/scrubbing/,
with the project's settings), and rewritten in the transaction that stores its contents when that
changed an item: an item that cannot be scrubbed (not JSON the inbox reads), and an item an inbound
filter dropped, keeps its type and nothing else. A row the inbox rejects keeps its reason and no body.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import sqlalchemy
from sqlalchemy import bindparam, insert, select, update

from app.inbox.tables import MAX_ENVELOPE_BYTES
from app.inbox.tag_index import TagCounts
from app.ingest.event_writer import write_event
from app.ingest.inbound_filters import FILTERED_TYPES, dropped_by
from app.ingest.incoming import (
    COUNTED_ITEM_TYPES,
    EVENT_ITEM_TYPES,
    READ_ITEM_TYPES,
    Incoming,
    Ingested,
    Readable,
    UnknownProject,
    its_own_fault,
)
from app.ingest.issue_keys import Keys, keys_of
from app.ingest.log_writer import add_count, write_counts, write_feedback, write_logs
from app.ingest.tag_counter import count_queued
from app.ingest.trace_writer import write_transaction
from app.ingest.user_agent import add_contexts, contexts_from_user_agent
from app.projects.registry import LOCAL_PROJECT_ID
from app.projects.settings_store import FILTERED, ProjectSettingsStore
from app.projects.tables import PROJECTS
from app.sourcemaps.event_patch import is_kept_text, kept_text
from app.sourcemaps.symbolicate import Symbolicator
from reflex_lookout.protocol import encodings, envelope, payloads
from reflex_lookout.scrubbing.envelope import FILTERED_BY, SCRUBBED
from reflex_lookout.scrubbing.relay import scrub_item
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from reflex_lookout.settings import Dsn, SettingsError
from reflex_lookout.tables import OUTBOX

logger = logging.getLogger(__name__)
FIND_PROJECT = select(PROJECTS.c.id).where(
    PROJECTS.c.id == sqlalchemy.bindparam("id"), PROJECTS.c.public_key == sqlalchemy.bindparam("public_key"))
# An outbox row's envelope, scrubbed (uncompressed); a rejected row's, dropped.
KEEP_BODY = update(OUTBOX).where(OUTBOX.c.id == bindparam("row_id")).values(
    body=bindparam("new_body"), size=bindparam("new_size"), content_encoding="")

Then = Callable[[sqlalchemy.Connection, Sequence[Incoming], list["Ingested | Exception"]], None]
# A batch written beside other feeders (PostgreSQL) is written again whole when it loses a race with
# another transaction, at most this many times in all, before its envelopes are tried one by one.
ATTEMPTS = 3
# PostgreSQL's codes for such a loss: a deadlock, a serialization failure, and a unique key another
# transaction inserted first (two feeders storing the same transaction's event_id, say: the second
# waits for the first to commit, then fails; written again, it finds what was stored). Events, issues
# and counts are written under `Keys`, so feeders do not race for those; a merge or a status change
# from the console can, and so can two fingerprints of one issue (merged) in two feeders.
RACES = frozenset({"40P01", "40001", "23505"})


class InboxStore:
    def __init__(self, engine: sqlalchemy.Engine, symbolicator: Symbolicator | None = None,
                 scrubbing_of: Callable[[int], ScrubbingSettings] | None = None) -> None:
        """`symbolicator`: maps browser stack frames to their original source before grouping
        (None: events are grouped as sent). `scrubbing_of(project_id)`: that project's scrubbing
        settings (asked for any id: an unknown project's envelope is rejected, and its row keeps
        its body only when the answer turns scrubbing off); by default the project's own, from its
        settings page (app/projects/settings_store.py), which scrub unless turned off."""
        self.engine = engine
        self.symbolicator = symbolicator
        self.settings = ProjectSettingsStore(engine)  # each project's filters and scrubbing (cached briefly)
        self.scrubbing_of = scrubbing_of or self.settings.scrubbing_of
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
        names the project, else the envelope header's does (sentry-sdk puts none there). Unlike the
        feeder's batches, it returns with the envelope's tags counted (the tag counter's step taken
        here: app/ingest/tag_counter.py), for a caller that reads what it stored at once."""
        result = self.ingest_batch([Incoming(body, content_encoding, received_at, dsn)])[0]
        if isinstance(result, Exception):
            raise result
        count_queued(self.engine)
        return result

    def ingest_batch(self, batch: Sequence[Incoming], then: Then | None = None,
                     within: sqlalchemy.Connection | None = None, read: Sequence[Readable | Exception] | None = None,
                     waiting: list[tuple[Incoming, Readable]] | None = None) -> list[Ingested | Exception]:
        """Keep each envelope of `batch`, in one transaction: per envelope, what was kept, or the
        error that kept it out (an unreadable envelope, an unknown project, a row the database
        refused). If writing one fails, each envelope is tried again in a transaction of its own,
        so one cannot sink the others. `then(connection, envelopes, results)` runs in the same
        transaction (the feeder marks its outbox rows read there, so none is read twice).
        Other database errors (locked, away; also while looking up a source map) propagate, and
        nothing of the batch is kept. `read`: the batch as `read_batch` read it (by default read here).

        `within`: a connection in the caller's transaction (PostgreSQL: the feeder's, which claimed
        the batch's outbox rows, app/ingest/feeder.py); the batch, and each retry, is then written in
        a savepoint of it, so that the claim holds throughout, and commits with it. Other feeders
        write beside it: an envelope is written only once its transaction holds the keys of what it
        counts into (`Keys`: its events' issues, its count rows), taken without waiting as the batch
        goes; one whose keys another feeder holds is written after the rest of the batch, if they are
        free by then, else set aside: appended to `waiting` with what was read of it and left out of
        the results (and of `then`), for the caller to write later. A batch that loses a race with
        another transaction anyway (`lost_a_race`: a deadlock with a merge, say) is written again
        whole, up to ATTEMPTS times, before it is tried one envelope at a time."""
        read = self.read_batch(batch) if read is None else list(read)
        wanted = [keys_of(r) for r in read] if within is not None else []
        attempt = 1
        while True:
            keys = Keys(wanted) if within is not None else None
            try:
                with self._transaction(within) as connection:
                    tags = TagCounts()  # the batch's, queued once for the tag counter (app/inbox/tag_index.py)
                    results = self._write_all(connection, read, tags, keys)
                    tags.queue(connection)
                    # A Readable still: set aside, another feeder's transaction holds its keys.
                    done = [incoming for incoming, r in zip(batch, results, strict=True) if not isinstance(r, Readable)]
                    written = [r for r in results if not isinstance(r, Readable)]
                    self._drop_rejected(connection, done, written)
                    if then is not None:
                        then(connection, done, written)
                if waiting is not None:
                    waiting.extend((incoming, r) for incoming, r in zip(batch, results, strict=True) if isinstance(r, Readable))
                return written
            except Exception as exc:
                if lost_a_race(exc) and attempt < ATTEMPTS:
                    logger.info("an ingest batch lost a race with another transaction, written again: %s", exc)
                    attempt += 1
                    continue
                if not its_own_fault(exc):
                    raise
                if len(batch) > 1:
                    return [one for incoming, r in zip(batch, read, strict=True)
                            for one in self.ingest_batch([incoming], then, within, [r], waiting)]
                with self._transaction(within) as connection:
                    self._drop_rejected(connection, batch, [exc])
                    if then is not None:
                        then(connection, batch, [exc])
                return [exc]

    def _write_all(self, connection: sqlalchemy.Connection, read: Sequence[Readable | Exception], tags: TagCounts,
                   keys: Keys | None) -> list[Ingested | Exception | Readable]:
        """Write each readable envelope (`keys`: only once its keys are held; the others after the
        rest, if their keys are free by then); what was kept of each, its error, or (not written) itself."""
        results: list[Ingested | Exception | Readable] = list(read)
        later: list[tuple[int, Readable]] = []
        for index, r in enumerate(read):
            if isinstance(r, Readable):
                if keys is None or keys.held(connection, index):
                    results[index] = self._write(connection, r, tags)
                else:
                    later.append((index, r))
        if keys is not None and later:
            held = set(keys.held_now(connection, [index for index, _ in later]))
            for index, r in later:
                if index in held:
                    results[index] = self._write(connection, r, tags)
        return results

    def read_batch(self, batch: Sequence[Incoming]) -> list[Readable | Exception]:
        """Each envelope of `batch` read (`_read`), or the error that keeps it out (its own fault;
        any other error propagates)."""
        read: list[Readable | Exception] = []
        for incoming in batch:
            try:
                read.append(self._read(incoming))
            except Exception as exc:
                if not its_own_fault(exc):
                    raise
                read.append(exc)
        return read

    @contextlib.contextmanager
    def _transaction(self, within: sqlalchemy.Connection | None) -> Iterator[sqlalchemy.Connection]:
        """A transaction of its own, or a savepoint of `within`'s (rolled back alone on an error)."""
        if within is None:
            with self.engine.begin() as connection:
                yield connection
        else:
            with within.begin_nested():
                yield within

    def _read(self, incoming: Incoming) -> Readable:
        """Parse the envelope, find its project, scrub its items and symbolicate its events:
        everything but the database writes (so none of it holds the write transaction open)."""
        parsed = envelope.parse(encodings.decode(incoming.body, incoming.content_encoding, MAX_ENVELOPE_BYTES),
                                MAX_ENVELOPE_BYTES)
        project_id = self.project_for(incoming.dsn or parsed.dsn)
        settings, filters = self.scrubbing_of(project_id), self.settings.filters_of(project_id)
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
                scrubbed.append(b"" if settings.scrub_data and not written_scrubbed else None)  # nothing the inbox can scrub
                continue
            sent = payloads.load_object(item.payload)  # refused: too deep, NaN, ... (reflex_lookout/protocol/payloads.py)
            # The filters read the item as sent (a client IP filter needs the IP that scrubbing may remove).
            dropped = not written_scrubbed and item.type in FILTERED_TYPES and dropped_by(item.type, sent, filters)
            if dropped:  # an inbound filter's: counted, never stored (its row keeps its type, nothing else)
                filtered[dropped] = filtered.get(dropped, 0) + 1
                scrubbed.append(b"")
                continue
            payload = sent if written_scrubbed else scrub_item(item.type, sent, settings, item.payload)
            scrubbed.append(None if payload is sent else json.dumps(payload).encode())
            kept_as: int | str | None = None
            if item.type in EVENT_ITEM_TYPES:
                sent_with_id = "event_id" in payload
                payload.setdefault("event_id", parsed.event_id)
                frames = None if self.symbolicator is None else self.symbolicator.symbolicated(
                    payload, by_path=project_id == LOCAL_PROJECT_ID, project_id=project_id,
                    dev_servers=self.settings.dev_servers_of(project_id))
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

    def _write(self, connection: sqlalchemy.Connection, readable: Readable, tags: TagCounts) -> Ingested:
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
            elif item_type in COUNTED_ITEM_TYPES:
                write_counts(connection, project_id, item_type, payload)
                result.counted += 1
            else:
                result.other_items[item_type] = result.other_items.get(item_type, 0) + 1
        return result

    def _drop_rejected(self, connection: sqlalchemy.Connection, batch: Sequence[Incoming],
                       results: Sequence[Ingested | Exception]) -> None:
        """Rejected rows keep their reason, not their bodies: nothing in them was scrubbed (unless
        their project does not scrub)."""
        for incoming, result in zip(batch, results, strict=True):
            if isinstance(result, Exception) and incoming.row_id is not None and self._scrubs(incoming.dsn):
                connection.execute(KEEP_BODY, {"row_id": incoming.row_id, "new_body": b"", "new_size": 0})

    def _scrubs(self, dsn: str | None) -> bool:
        """Whether the project `dsn` names scrubs (an unreadable DSN: the default's answer)."""
        try:
            project_id = int(Dsn.parse(dsn or "").project_id)
        except (SettingsError, ValueError):
            return ScrubbingSettings().scrub_data
        return self.scrubbing_of(project_id).scrub_data


def lost_a_race(exc: BaseException) -> bool:
    """Whether `exc` is a transaction losing to a concurrent one (RACES), rather than a fault of the
    envelope or of the database: writing it again is what it takes."""
    return isinstance(exc, sqlalchemy.exc.DBAPIError) and getattr(exc.orig, "sqlstate", None) in RACES


def _rewritten(parsed: envelope.Envelope, scrubbed: list[bytes | None]) -> bytes:
    """The envelope with each item's payload replaced where one is given (b"": the item keeps its
    type alone)."""
    return envelope.serialize(envelope.Envelope(parsed.headers, tuple(
        item if new is None else envelope.Item(item.type, {} if new == b"" else item.headers, new)
        for item, new in zip(parsed.items, scrubbed, strict=True))))
