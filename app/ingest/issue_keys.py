"""The keys an ingest transaction holds on PostgreSQL, where several feeders write at once
(`Keys`, `keys_of`, `lock`): an advisory lock per issue and per count row an envelope writes to."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence

import sqlalchemy

from app.inbox.grouping import group
from app.ingest.incoming import COUNTED_ITEM_TYPES, EVENT_ITEM_TYPES, Readable
from app.ingest.log_writer import counts as counted
from app.projects.options_store import FILTERED
from app.releases.session_writer import SESSION_ITEM_TYPES, row_keys


class Keys:
    """The keys an ingest transaction holds (PostgreSQL, several feeders): an advisory lock per
    issue an envelope's events go to (their project and grouping fingerprint, as
    app/ingest/event_writer.py groups them) and per count row it adds to (client reports and what
    an inbound filter dropped: app/ingest/log_writer.py; sessions: app/releases/session_writer.py). Two feeders never write to one
    issue or count row at once, so neither waits on the other's issue rows, nor makes a new issue
    the other is making. Each takes the keys of the next LOOKAHEAD envelopes at once, without
    waiting (`pg_try_advisory_xact_lock`); an envelope whose keys another feeder holds is asked for
    again after the rest of the batch (the other may have committed by then: the key, taken late, is
    then held the shorter), then set aside (`InboxStore.ingest_batch`). Keys are held until the
    transaction ends. app/ingest/feeder.py waits for them, at the start of a transaction, when an
    envelope was set aside too often or a batch set every one aside."""

    LOOKAHEAD = 25

    def __init__(self, wanted: Sequence[frozenset[int]]) -> None:
        self.wanted = wanted  # each envelope's (`keys_of`)
        self.taken: set[int] = set()
        self.tried_until = 0  # the envelopes before it had their keys asked for

    def held(self, connection: sqlalchemy.Connection, index: int) -> bool:
        """Whether the transaction holds envelope `index`'s keys (asked for now, with those of the
        next envelopes, unless they were asked for lately)."""
        if not self.wanted[index] <= self.taken and index >= self.tried_until:
            self.tried_until = index + self.LOOKAHEAD
            asked = set().union(*self.wanted[index:self.tried_until]) - self.taken
            self.taken |= try_lock(connection, asked)
        return self.wanted[index] <= self.taken

    def held_now(self, connection: sqlalchemy.Connection, indexes: Sequence[int]) -> list[int]:
        """Of envelopes `indexes`, those whose keys the transaction holds now that it asked again for
        the missing ones (once, for all of them)."""
        self.taken |= try_lock(connection, set().union(*(self.wanted[index] for index in indexes)) - self.taken)
        return [index for index in indexes if self.wanted[index] <= self.taken]


INGEST_LOCK = 7_426_004  # PostgreSQL advisory locks (two-int keys: this, and a key of `keys_of`): the ingest's
TRY_LOCK = f"SELECT key FROM unnest(%s::int[]) AS key WHERE pg_try_advisory_xact_lock({INGEST_LOCK}, key)"
LOCK = (f"SELECT count(pg_advisory_xact_lock({INGEST_LOCK}, key)) FROM"
        " (SELECT key FROM unnest(%s::int[]) WITH ORDINALITY AS keys (key, n) ORDER BY n) AS sorted")


def keys_of(read: Readable | Exception) -> frozenset[int]:
    """The keys of what an envelope counts into (see `Keys`), as 32-bit numbers: none for one that
    cannot be read, nor for an event that cannot be grouped (its write raises that again, as its own
    fault). Two things with one number only wait for each other."""
    if not isinstance(read, Readable):
        return frozenset()
    named: list[tuple[object, ...]] = [(read.project_id, FILTERED, name) for name in read.filtered]
    for item_type, payload, _ in read.items:
        if item_type in EVENT_ITEM_TYPES:
            with contextlib.suppress(Exception):
                named.append((read.project_id, group(payload).fingerprint))
        elif item_type in SESSION_ITEM_TYPES:
            with contextlib.suppress(Exception):
                named.extend((read.project_id, "session", *row) for row in row_keys(
                    read.project_id, item_type, payload, read.received_at))
        elif item_type in COUNTED_ITEM_TYPES:
            with contextlib.suppress(Exception):
                named.extend((read.project_id, kind, key) for kind, key, _ in counted(payload))
    return frozenset(int.from_bytes(hashlib.blake2b(repr(name).encode(), digest_size=4).digest(), "big", signed=True)
                     for name in named)


def try_lock(connection: sqlalchemy.Connection, keys: set[int] | frozenset[int]) -> set[int]:
    """The keys of `keys` the transaction holds now (taken without waiting; others hold the rest)."""
    if not keys:
        return set()
    return set(connection.exec_driver_sql(TRY_LOCK, (sorted(keys),)).scalars())


def lock(connection: sqlalchemy.Connection, keys: set[int] | frozenset[int]) -> None:
    """Take `keys`, waiting for the transactions that hold them, in the order of their numbers (two
    transactions that wait so, and only so, never wait for each other in a circle)."""
    if keys:
        connection.exec_driver_sql(LOCK, (sorted(keys),))
