"""The embedded inbox's writer: projects, and envelopes read into issues, events, traces and logs.

`ingest_batch` (and `ingest_envelope`, one at a time) takes envelopes as the outbox keeps them
(body and content encoding), finds the project from the DSN they were accepted for, and keeps each
error or message event (symbolicated, app/sourcemaps/symbolicate.py, given the browser, os and
device its User-Agent names, user_agent.py, then grouped into an issue: app/ingest/event_writer.py),
each transaction with its spans (trace_writer.py), each log line and each piece of feedback, and
counts sessions (app/releases/session_writer.py) and client reports (log_writer.py); events and transactions once per
`event_id`, and the events and transactions the project's inbound filters dropped, per filter
(`inbox_count`, kind "filtered"). An event that came through the outbox is kept where it is, in its
envelope's row (`kept_events` in app/inbox/reading.py reads it back), unless symbolication or its
User-Agent changed it: then it is kept as sent with a patch of the changes (app/sourcemaps/event_patch.py).

The tunnel and the ingest endpoints filter and scrub an envelope before they write it
(app/ingest/before_write.py; its header says so), and such a row is read as it is: a filtered item
is there as its type and the filter's name. A row stored as received (by a Lookout before that
change, or through `ingest_envelope`) is filtered and scrubbed as it is read (envelope_reader.py,
reflex_lookout/scrubbing/, with the project's options), and rewritten in the transaction that
stores its contents when that changed an item: an item that cannot be scrubbed (not JSON the inbox
reads), and an item an inbound filter dropped, keeps its type and nothing else. A row the inbox
rejects keeps its reason and no body.

Here, the batch: each envelope is read (envelope_reader.py, outside the write transaction), then
written (envelope_writer.py) in one transaction for the batch, or a savepoint of the feeder's, with
its issues' keys held, written again when it lost a race, one envelope at a time when one fails.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence

import sqlalchemy
from sqlalchemy import insert, select

from app.inbox.tag_index import TagCounts
from app.ingest.envelope_reader import read_envelope
from app.ingest.envelope_writer import KEEP_BODY, write_envelope
from app.ingest.incoming import Incoming, Ingested, Readable, UnknownProject, its_own_fault
from app.ingest.issue_keys import Keys, keys_of
from app.ingest.tag_counter import count_queued
from app.projects.options_store import ProjectOptionsStore
from app.projects.tables import PROJECTS
from app.sourcemaps.symbolicate import Symbolicator
from reflex_lookout.dsn import Dsn
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from reflex_lookout.settings_error import SettingsError

logger = logging.getLogger(__name__)
FIND_PROJECT = select(PROJECTS.c.id).where(
    PROJECTS.c.id == sqlalchemy.bindparam("id"), PROJECTS.c.public_key == sqlalchemy.bindparam("public_key"))

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
        options (asked for any id: an unknown project's envelope is rejected, and its row keeps
        its body only when the answer turns scrubbing off); by default the project's own, from its
        settings page (app/projects/options_store.py), which scrub unless turned off."""
        self.engine = engine
        self.symbolicator = symbolicator
        self.options = ProjectOptionsStore(engine)  # each project's filters and scrubbing (cached briefly)
        self.scrubbing_of = scrubbing_of or self.options.scrubbing_of
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
                    results[index] = write_envelope(connection, r, tags)
                else:
                    later.append((index, r))
        if keys is not None and later:
            held = set(keys.held_now(connection, [index for index, _ in later]))
            for index, r in later:
                if index in held:
                    results[index] = write_envelope(connection, r, tags)
        return results

    def read_batch(self, batch: Sequence[Incoming]) -> list[Readable | Exception]:
        """Each envelope of `batch` read (`read_envelope`, app/ingest/envelope_reader.py), or the
        error that keeps it out (its own fault; any other error propagates)."""
        read: list[Readable | Exception] = []
        for incoming in batch:
            try:
                read.append(read_envelope(incoming, self.project_for, self.scrubbing_of, self.options,
                                         self.symbolicator))
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

