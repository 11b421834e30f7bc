"""The database: engine from `rxconfig.db_url`, and alembic migrations applied on start."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import sqlalchemy
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

ROOT = Path(__file__).resolve().parent.parent
ALEMBIC_INI = ROOT / "alembic.ini"


# A SQLite connection is an open file that no server drops: no ping before each use (Reflex's default
# pings, for a database server; PostgreSQL keeps it). A larger pool (20 + 20 against Reflex's 5 + 10)
# was measured and dropped: the hostile-client backend used more CPU with it (155 s against 136 s).
SQLITE_POOL = {"pool_pre_ping": False}


def engine(url: str | None = None) -> sqlalchemy.Engine:
    """The engine for `url`, or for the configured `db_url` (shared with Reflex's own)."""
    from reflex import model
    from reflex_base.config import get_config

    url = url or get_config().db_url
    if url is not None and url.startswith("sqlite") and url not in model._ENGINE:
        # Made here with SQLite's pool and kept where Reflex looks, so `rx.session()` shares it.
        model._ENGINE[url] = sqlalchemy.create_engine(url, **{**model.get_engine_args(url), **SQLITE_POOL})
    eng = model.get_engine(url)
    if eng.dialect.name == "sqlite" and not sqlalchemy.event.contains(eng, "connect", _sqlite_pragmas):
        sqlalchemy.event.listen(eng, "connect", _sqlite_pragmas)
        eng.dispose()  # connections opened before the listener existed lack the pragmas
    return eng


def migrated_engine(url: str | None = None) -> sqlalchemy.Engine:
    """`engine(url)` with every migration applied: for a process that uses the database before (or
    without) a backend start, such as the command-line tools."""
    eng = engine(url)
    migrate(eng)
    return eng


def inserted_id(result: sqlalchemy.CursorResult[Any]) -> int:
    """The primary key the row an `insert(...)` statement added was given."""
    key = result.inserted_primary_key
    if key is None:  # SQLAlchemy's type allows it; an INSERT of one row always has one
        raise RuntimeError("the statement inserted no row")
    return int(key[0])


def mark_used(eng: sqlalchemy.Engine, table: sqlalchemy.Table, row_id: int, last_used_at: float | None,
              now: float, every_s: float) -> float | None:
    """Write `now` into a row's `last_used_at` when it is `every_s` old or unset (a token's, at most once
    a minute: no write per request); the row's last use as it stands after."""
    if last_used_at is not None and now - last_used_at < every_s:
        return last_used_at
    with eng.begin() as connection:  # the condition again: of requests at once, one writes
        connection.execute(sqlalchemy.update(table).where(
            table.c.id == row_id,
            sqlalchemy.or_(table.c.last_used_at.is_(None), table.c.last_used_at <= now - every_s),
        ).values(last_used_at=now))
    return now


def sqlite_synchronous(environ: Mapping[str, str] = os.environ) -> str:
    """`LOOKOUT_SQLITE_SYNCHRONOUS`: NORMAL (default) or FULL.

    In WAL mode, NORMAL makes a commit survive the process being killed (what the crash test checks)
    and never corrupts the file; the WAL is flushed to disk at each checkpoint (every 0.2 s, by the
    outbox writer), so a power cut or kernel crash can lose the last moments of accepted envelopes.
    Sentry Relay's own disk spool makes the same choice. FULL also flushes on every commit, which
    survives power loss and costs intake throughput (bench/README.md measures both).
    """
    value = environ.get("LOOKOUT_SQLITE_SYNCHRONOUS", "NORMAL").strip().upper()
    if value not in ("NORMAL", "FULL"):
        raise ValueError(f"LOOKOUT_SQLITE_SYNCHRONOUS must be NORMAL or FULL, not {value!r}.")
    return value


SQLITE_SYNCHRONOUS = sqlite_synchronous()


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # DB-API objects
    # WAL lets the tunnel's writes and the forwarder's reads overlap; busy_timeout rides out locks.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute(f"PRAGMA synchronous={SQLITE_SYNCHRONOUS}")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA journal_size_limit=67108864")  # the WAL file shrinks back when it starts over
    # Deleted content is overwritten with zeros, not left in free space and free pages: an envelope's
    # body replaced by its scrubbed copy (app/ingest/envelope_writer.py) and deleted rows are gone from the file.
    cursor.execute("PRAGMA secure_delete=ON")
    cursor.close()


def _alembic_config(connection: sqlalchemy.Connection) -> Config:
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    config.attributes["connection"] = connection
    return config


MIGRATION_LOCK = 7_426_001  # PostgreSQL advisory lock key: one worker migrates at a time


def migrate(eng: sqlalchemy.Engine) -> str | None:
    """Bring the database to the newest migration; returns the revision it is at. Several workers
    starting at once take turns: the first migrates, the others then find nothing to do."""
    with _migrating_alone(eng), eng.begin() as connection:
        if eng.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")  # until commit
        command.upgrade(_alembic_config(connection), "head")
        return MigrationContext.configure(connection).get_current_revision()


@contextlib.contextmanager
def _migrating_alone(eng: sqlalchemy.Engine) -> Iterator[None]:
    """For a SQLite file: an exclusive lock on `<file>.migrate-lock` while migrating."""
    database = eng.url.database if eng.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    with open(f"{database}.migrate-lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def head_revision() -> str | None:
    """The newest migration committed in the repository."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    return ScriptDirectory.from_config(config).get_current_head()
