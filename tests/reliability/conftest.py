"""Fixtures of the reliability suite: a PostgreSQL database and an upstream per test, the pipeline
under granian, and each test's figures, printed together at the end of the run."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from plugin_support.upstream import Upstream
from tests.reliability.cluster import Tunnels
from tests.services import Postgres

FIGURES: dict[str, dict[str, object]] = {}


@pytest.fixture
def postgres_database(postgres_server: Postgres) -> Iterator[str]:
    """An empty PostgreSQL database (the pipeline migrates it at start)."""
    name = f"reliability_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(postgres_server.url(), isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    yield postgres_server.url(name)
    if postgres_server.process is None:
        postgres_server.start()
    with admin.connect() as connection:
        connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    admin.dispose()


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


@pytest.fixture
def database_kind() -> str:
    """PostgreSQL, unless a test parametrizes `database_kind` to run on SQLite as well."""
    return "postgresql"


@pytest.fixture
def tunnels(request: pytest.FixtureRequest, database_kind: str, upstream: Upstream, tmp_path: Path) -> Iterator[Tunnels]:
    """Two workers on PostgreSQL (or one SQLite file) forwarding to `upstream`, retrying fast; not
    started yet (a test may change `env` first)."""
    url = (request.getfixturevalue("postgres_database") if database_kind == "postgresql"
           else f"sqlite:///{tmp_path / 'pipeline.db'}")
    cluster = Tunnels(env={
        "DATABASE_URL": url, "SENTRY_DSN": f"http://public@127.0.0.1:{upstream.port}/42",
        "LOOKOUT_SERVER_MONITORING": "off", "LOOKOUT_RETRY_BASE_S": "1", "LOOKOUT_RETRY_MAX_S": "2",
    }, log=tmp_path / "granian.log")
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> dict[str, object]:
    """The test's figures (sent, acknowledged, delivered, lost, ...), printed after the run."""
    found: dict[str, object] = {}
    FIGURES[request.node.name] = found
    return found


def pytest_terminal_summary(terminalreporter) -> None:  # pytest's reporter
    if not FIGURES:
        return
    terminalreporter.section("reliability figures")
    for name, found in FIGURES.items():
        terminalreporter.write_line(f"{name}: " + ", ".join(f"{k} {v}" for k, v in found.items()))
