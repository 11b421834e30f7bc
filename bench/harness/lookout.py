"""Lookout as a peer under load: the settings that keep its caps and intake limits out of the figures,
and the rows of its SQLite outbox."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

# The burst fills the outbox faster than it drains; a cap above the burst keeps 503s out of the
# intake figures (the cap itself is tested in tests/monitoring/test_tunnel.py).
OUTBOX_CAP = 4 * 1024**3
# One load generator on loopback sends far more than a real client: the intake rates (429) are off.
NO_INTAKE_LIMITS = {"LOOKOUT_INGEST_BYTES_PER_MIN_PER_CLIENT": "0", "LOOKOUT_INGEST_BYTES_PER_MIN_PER_KEY": "0"}


def outbox_rows(db_path: Path) -> int:
    with contextlib.closing(sqlite3.connect(db_path, timeout=10)) as connection:
        return int(connection.execute("select count(*) from outbox").fetchone()[0])


def local_inbox_database(db_path: Path, dsn: str) -> None:
    """A SQLite file as Lookout's backend leaves it before it serves in local mode: migrated, and the
    embedded inbox's project for `dsn` made with its default options (filters and scrubbing on), so
    that the tunnel's before-write step (app/ingest/before_write.py) reads that project's options."""
    from app import db
    from app.ingest.store import InboxStore
    from reflex_lookout.dsn import Dsn

    engine = db.engine(f"sqlite:///{db_path}")
    try:
        db.migrate(engine)
        InboxStore(engine).ensure_project(Dsn.parse(dsn))
    finally:
        engine.dispose()


def local_rows(db_path: Path) -> tuple[int, int]:
    """(rows of status "local", how many of them say in their envelope header that they were
    filtered and scrubbed before the write)."""
    from reflex_lookout.scrubbing.envelope import SCRUBBED

    marked = f'"{SCRUBBED}": 1'.encode()
    with contextlib.closing(sqlite3.connect(db_path, timeout=10)) as connection:
        total, scrubbed = connection.execute(
            "select count(*), coalesce(sum(instr(substr(body, 1, instr(body, x'0a')), ?) > 0), 0)"
            " from outbox where status = 'local'",
            (marked,),
        ).fetchone()
    return int(total), int(scrubbed)
