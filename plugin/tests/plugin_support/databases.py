"""The outbox's database, as a host app gets it (`runtime.outbox_engine`: the plugin's tables, its
SQLite pragmas): the `engine` fixture, on a SQLite file and on PostgreSQL, each test a database of
its own.

PostgreSQL is a server the test run provides as a `postgres_server` fixture (in this repository,
conftest.py at its root: a private cluster on loopback, tests/services.py); where there is none
(the plugin's tests run on their own), the PostgreSQL cases are skipped, saying so."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from reflex_lookout import runtime

NO_SERVER = "PostgreSQL: no `postgres_server` fixture in this run (the repository's conftest.py starts one)"


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[sqlalchemy.Engine]:
    if request.param == "sqlite":
        eng = runtime.outbox_engine(f"sqlite:///{tmp_path / 'test.db'}")
        yield eng
        eng.dispose()
        return
    try:
        server = request.getfixturevalue("postgres_server")
    except pytest.FixtureLookupError:
        pytest.skip(NO_SERVER)
    name = f"outbox_{uuid.uuid4().hex[:16]}"
    admin = sqlalchemy.create_engine(server.url(), isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    eng = runtime.outbox_engine(server.url(name))
    try:
        yield eng
    finally:
        eng.dispose()
        if server.process is not None:  # a fault test may have left it stopped
            with admin.connect() as connection:
                connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()
