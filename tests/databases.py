"""Database fixtures for every test package (a pytest plugin: tests/conftest.py names it): a migrated
database, on SQLite and on PostgreSQL, and an inbox on it with the default local project."""

from __future__ import annotations

import pytest
import sqlalchemy

from app import db
from app.ingest.store import InboxStore
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_DSN


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
