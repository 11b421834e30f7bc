"""The database: SQLite settings, and migrations that reach head and match the models exactly."""

from pathlib import Path

import pytest
import sqlalchemy
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from app import db
from app.models import METADATAS


def test_migrations_bring_an_empty_file_to_head(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    engine = sqlalchemy.create_engine(f"sqlite:///{path}")
    assert db.head_revision() is not None
    assert db.migrate(engine) == db.head_revision()
    assert path.exists()
    with engine.connect() as connection:
        stored = connection.execute(sqlalchemy.text("select version_num from alembic_version")).scalar_one()
    assert stored == db.head_revision()


def test_migrations_match_the_models(tmp_path: Path) -> None:
    # A model changed without `reflex db makemigrations` shows up here as a difference.
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'schema.db'}")
    db.migrate(engine)
    with engine.connect() as connection:
        differences = compare_metadata(MigrationContext.configure(connection), list(METADATAS))  # type: ignore[arg-type]  # a list works (autogenerate's target_metadata)
    assert differences == []


def test_migrating_twice_is_harmless(tmp_path: Path) -> None:
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'twice.db'}")
    assert db.migrate(engine) == db.migrate(engine) == db.head_revision()


def test_engine_uses_the_configured_url() -> None:
    from rxconfig import config

    assert str(db.engine().url) == config.db_url


def test_sqlite_synchronous_is_normal_unless_set_to_full() -> None:
    assert db.sqlite_synchronous({}) == "NORMAL"
    assert db.sqlite_synchronous({"LOOKOUT_SQLITE_SYNCHRONOUS": " full "}) == "FULL"
    with pytest.raises(ValueError, match="NORMAL or FULL"):
        db.sqlite_synchronous({"LOOKOUT_SQLITE_SYNCHRONOUS": "OFF"})


def test_connections_get_the_chosen_synchronous_level(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(db, "SQLITE_SYNCHRONOUS", "FULL")
    engine = db.engine(f"sqlite:///{tmp_path / 'full.db'}")
    with engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        # deleted content zeroed, whatever SQLite's build defaults to (tests/ingest/test_store_scrubbed.py)
        assert connection.exec_driver_sql("PRAGMA secure_delete").scalar() == 1


def test_a_sqlite_engine_does_not_ping_and_reflex_shares_it(tmp_path) -> None:
    from reflex.model import get_engine

    url = f"sqlite:///{tmp_path / 'quiet.db'}"
    engine = db.engine(url)
    assert engine.pool._pre_ping is False  # SQLAlchemy's flag: no "select 1" before each checkout
    assert get_engine(url) is engine  # Reflex's sessions share it
