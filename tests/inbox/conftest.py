"""An inbox on a real SQLite file, migrated, with the default local project."""

from __future__ import annotations

import pytest
import sqlalchemy

from app import db
from app.ingest.store import InboxStore
from app.settings import Dsn
from tests.conftest import LOCAL_DSN

__all__ = ["LOCAL_DSN"]  # the tests' project 1 (tests/conftest.py)


@pytest.fixture
def engine(database_url: str) -> sqlalchemy.Engine:
    """A migrated database: each test runs on SQLite and on PostgreSQL (tests/conftest.py)."""
    eng = db.engine(database_url)
    db.migrate(eng)
    return eng


@pytest.fixture
def inbox(engine: sqlalchemy.Engine) -> InboxStore:
    store = InboxStore(engine)
    store.ensure_project(Dsn.parse(LOCAL_DSN))
    return store
