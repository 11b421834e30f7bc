"""Migrations: applied to an empty SQLite file, they reach head and match the models exactly."""

from pathlib import Path

import sqlalchemy
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from app import db
from app.models import metadata


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
        differences = compare_metadata(MigrationContext.configure(connection), metadata)
    assert differences == []


def test_migrating_twice_is_harmless(tmp_path: Path) -> None:
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'twice.db'}")
    assert db.migrate(engine) == db.migrate(engine) == db.head_revision()


def test_engine_uses_the_configured_url() -> None:
    from rxconfig import config

    assert str(db.engine().url) == config.db_url
