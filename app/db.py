"""The database: engine from `rxconfig.db_url`, and alembic migrations applied on start."""

from __future__ import annotations

from pathlib import Path

import sqlalchemy
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

ROOT = Path(__file__).resolve().parent.parent
ALEMBIC_INI = ROOT / "alembic.ini"


def engine(url: str | None = None) -> sqlalchemy.Engine:
    """The engine for `url`, or for the configured `db_url` (shared with Reflex's own)."""
    from reflex.model import get_engine

    return get_engine(url)


def _alembic_config(connection: sqlalchemy.Connection) -> Config:
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    config.attributes["connection"] = connection
    return config


def migrate(eng: sqlalchemy.Engine) -> str | None:
    """Bring the database to the newest migration; returns the revision it is at."""
    with eng.begin() as connection:
        command.upgrade(_alembic_config(connection), "head")
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest migration committed in the repository."""
    config = Config(str(ALEMBIC_INI))
    config.set_main_option("script_location", str(ROOT / "alembic"))
    return ScriptDirectory.from_config(config).get_current_head()
