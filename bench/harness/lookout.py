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
