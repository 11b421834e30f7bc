"""The chunks sentry-cli uploads (app/sourcemaps/upload_api.py), kept in `upload_chunk` until the
bundle they make up is assembled (app/sourcemaps/uploads.py), which deletes them.

Chunks are per project: `missing` tells a token which of its own project's chunks are there, never
another project's. A chunk is named by the SHA-1 of its uncompressed bytes, so `put` is idempotent
(the same name is the same bytes). A chunk never assembled (a CLI stopped half-way) is dropped
after MAX_AGE_S by `collect_garbage`, which assemble and the chunk upload call.
Sync (SQLAlchemy): callers on the event loop run it in a worker thread.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence

import sqlalchemy
from sqlalchemy import delete, func, insert, select

from app.sourcemaps.tables import CHUNKS
from app.tables import chunks as slices

logger = logging.getLogger(__name__)
MAX_AGE_S = 3600.0


class ChunkStore:
    def __init__(self, engine: sqlalchemy.Engine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock

    def missing(self, project_id: int, sha1s: Sequence[str]) -> list[str]:
        """The names in `sha1s` the project has no chunk of, in order, each once."""
        wanted = list(dict.fromkeys(sha1s))
        present: set[str] = set()
        with self.engine.connect() as connection:
            for part in slices(wanted):
                present.update(connection.execute(select(CHUNKS.c.sha1).where(
                    CHUNKS.c.project_id == project_id, CHUNKS.c.sha1.in_(part))).scalars())
        return [sha1 for sha1 in wanted if sha1 not in present]

    def put(self, project_id: int, sha1: str, data: bytes) -> None:
        """Keep a chunk (the caller has checked that `sha1` is its SHA-1); kept already is fine."""
        row = {"project_id": project_id, "sha1": sha1, "size": len(data), "data": data, "created_at": self.clock()}
        # IntegrityError: it is there (a CLI sending it again, or another request at the same time).
        with contextlib.suppress(sqlalchemy.exc.IntegrityError), self.engine.begin() as connection:
            connection.execute(insert(CHUNKS).values(**row))

    def sizes(self, project_id: int, sha1s: Sequence[str]) -> dict[str, int]:
        """The size of each of the project's chunks named in `sha1s` that is there."""
        found: dict[str, int] = {}
        with self.engine.connect() as connection:
            for part in slices(list(dict.fromkeys(sha1s))):
                found.update((row.sha1, row.size) for row in connection.execute(select(CHUNKS.c.sha1, CHUNKS.c.size).where(
                    CHUNKS.c.project_id == project_id, CHUNKS.c.sha1.in_(part))))
        return found

    def pending_bytes(self, project_id: int) -> int:
        """What the project's chunks not yet assembled hold."""
        with self.engine.connect() as connection:
            return int(connection.execute(
                select(func.coalesce(func.sum(CHUNKS.c.size), 0)).where(CHUNKS.c.project_id == project_id)).scalar_one())

    def read(self, project_id: int, sha1s: Sequence[str]) -> bytes:
        """The chunks joined in the order named (a name may recur); `KeyError` naming one that is
        not there."""
        data: dict[str, bytes] = {}
        with self.engine.connect() as connection:
            for part in slices(list(dict.fromkeys(sha1s))):
                data.update((row.sha1, bytes(row.data)) for row in connection.execute(
                    select(CHUNKS.c.sha1, CHUNKS.c.data).where(CHUNKS.c.project_id == project_id, CHUNKS.c.sha1.in_(part))))
        missing = next((sha1 for sha1 in sha1s if sha1 not in data), None)
        if missing is not None:
            raise KeyError(missing)
        return b"".join(data[sha1] for sha1 in sha1s)

    def delete(self, project_id: int, sha1s: Sequence[str], connection: sqlalchemy.Connection | None = None) -> None:
        """Drop the project's chunks named in `sha1s`; in `connection`'s transaction when given."""
        with contextlib.ExitStack() as stack:
            if connection is None:
                connection = stack.enter_context(self.engine.begin())
            for part in slices(list(dict.fromkeys(sha1s))):
                connection.execute(delete(CHUNKS).where(CHUNKS.c.project_id == project_id, CHUNKS.c.sha1.in_(part)))

    def collect_garbage(self, max_age_s: float = MAX_AGE_S) -> int:
        """Drop every chunk (of any project) older than `max_age_s`; how many went. Looks first, so
        that most calls write nothing."""
        cutoff = self.clock() - max_age_s
        old = CHUNKS.c.created_at < cutoff
        with self.engine.connect() as connection:
            if connection.execute(select(CHUNKS.c.sha1).where(old).limit(1)).first() is None:
                return 0
        with self.engine.begin() as connection:
            dropped = connection.execute(delete(CHUNKS).where(old)).rowcount
        logger.info("%d uploaded chunks older than %d s dropped (never assembled)", dropped, max_age_s)
        return int(dropped)
