"""Shared test set-up: tests run in local mode, whatever the developer's shell holds; the storage
tests run on SQLite and on a real PostgreSQL (tests/services.py), through `database_url`."""

import atexit
import os
import shutil
import tempfile

# Settings are read once at import, so this must happen before `app` is imported.
os.environ["SENTRY_DSN"] = ""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import sentry_sdk
import sqlalchemy
from sentry_sdk import integrations as sentry_integrations

from app.ingest.endpoints import Ingest
from app.ingest.store import InboxStore
from app.settings import SETTINGS, Settings
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel
from tests import netns, pg_databases, services
from tests.alerts.receivers import MailReceiver, WebhookReceiver
from tests.environment import IN_CI, LOCAL_DSN

# Reflex keeps page states on disk in .states/ of the working directory, and each app or state
# manager that starts purges the expired files it lists there: test processes running side by side
# (`make test`) and the apps they start each get a folder of their own, or one deletes a file
# another is reading.
_STATES = tempfile.mkdtemp(prefix="lookout-test-states-")
atexit.register(shutil.rmtree, _STATES, ignore_errors=True)
os.environ["REFLEX_STATES_WORKDIR"] = _STATES

# engine, inbox; first_build, second_build (the source-map tests' two builds of one small app)
pytest_plugins = ["tests.databases", "tests.sourcemaps.reflex_like_build"]

# This process's settings, as the backend's start leaves them (it reads the key from its database).
SETTINGS.settle_local_dsn(Dsn.parse(LOCAL_DSN))


@pytest.fixture
def sentry_init() -> Iterator:
    """sentry_init(**options) → sentry-sdk started for this test (closed after it)."""

    def init(**options: object) -> None:
        # Scopes outlive a client: what an earlier test in this process left (breadcrumbs of its
        # requests and queries, tags) must not reach this one's events.
        for scope in (sentry_sdk.get_global_scope(), sentry_sdk.get_isolation_scope(), sentry_sdk.get_current_scope()):
            scope.clear()
        # An integration an earlier test's client disabled (the server SDK's options disable Starlette's)
        # is marked processed and never set up in this process again (sentry-sdk's setup_integrations):
        # forget those, so a test whose client enables it gets it (test_store_scrubbed after test_server).
        processed = sentry_integrations._processed_integrations
        processed.intersection_update(sentry_integrations._installed_integrations)
        sentry_sdk.init(**options)

    yield init
    sentry_sdk.get_client().close()
    sentry_sdk.get_global_scope().set_client(None)


@pytest.fixture
def anyio_backend() -> str:
    # Async tests (marked `anyio`) run on asyncio, as the app does under granian.
    return "asyncio"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The reliability tests first: they wait the longest (an alert sender's pace, outages; up to
    2 min for one test), so under `-n` they start at once and their waits overlap the short tests
    (xdist's worksteal hands the rest to processes as they come free) and, in `make test`, the other
    parts' work, rather than leaving a run's last minutes to a test that waits. Browser tests last: fast feedback
    first, and Playwright's sync API keeps an event loop running in the main thread once started,
    which async tests cannot share. Of those, the scaled-out app last: its build replaces the
    static files the session's app serves."""
    items.sort(key=lambda item: ("/e2e/" in str(item.path), item.path.name == "test_scale_out.py",
                                 "/reliability/" not in str(item.path)))


def need(server: str) -> None:
    """Skip (saying why) when `server`'s programs are missing, except in CI, where that fails."""
    absent = [m for m in services.missing() if m.startswith(server)]
    if absent:
        message = f"{', '.join(absent)} not installed (`make test-deps` installs it)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="session")
def redis_server() -> Iterator[services.Redis]:
    need("Redis")
    with services.redis() as server:
        yield server


@pytest.fixture(scope="session")
def elsewhere() -> Iterator[netns.Namespace]:
    """Another machine: a network namespace (tests/netns.py) whose one link leads to this one."""
    reason = netns.unavailable()
    if reason is not None:
        if IN_CI:
            pytest.fail(reason)
        pytest.skip(reason)
    with netns.namespace() as made:
        yield made


@pytest.fixture(scope="session")
def postgres_template(postgres_server: services.Postgres) -> str:
    """A database with every migration applied, copied for each test (much faster than migrating)."""
    from app import db

    name = "lookout_template"
    admin = sqlalchemy.create_engine(postgres_server.url(), isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    admin.dispose()
    engine = sqlalchemy.create_engine(postgres_server.url(name))
    db.migrate(engine)
    engine.dispose()
    return name


@pytest.fixture(scope="session")
def postgres_databases(postgres_server: services.Postgres, postgres_template: str) -> Iterator[pg_databases.Databases]:
    databases = pg_databases.Databases(postgres_server.url(), postgres_template)
    yield databases
    databases.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty, migrated database of each kind: a SQLite file, or a PostgreSQL database of the
    test's alone (tests/pg_databases.py)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.db'}"
        return
    server: services.Postgres = request.getfixturevalue("postgres_server")
    databases: pg_databases.Databases = request.getfixturevalue("postgres_databases")
    name = databases.take()
    try:
        yield server.url(name)
    finally:
        from reflex.model import _ENGINE

        engine = _ENGINE.pop(server.url(name), None)
        if engine is not None:
            engine.dispose()
        if server.process is not None:  # a fault test may have left it stopped
            databases.give_back(name)


@pytest.fixture
def hook() -> Iterator[WebhookReceiver]:
    """A webhook receiver on loopback (tests/alerts/receivers.py), for alert deliveries."""
    with WebhookReceiver() as receiver:
        yield receiver


@pytest.fixture
def mail() -> Iterator[MailReceiver]:
    """A real SMTP server on loopback (tests/alerts/receivers.py), for alert e-mails."""
    with MailReceiver() as receiver:
        yield receiver


@pytest.fixture
async def ingest(engine: sqlalchemy.Engine, inbox: InboxStore) -> AsyncIterator[Ingest]:
    """Sentry's ingest endpoints (app/ingest/endpoints.py) on the test's `engine` and `inbox`, with a tunnel of
    their own (its writer closed after)."""
    tunnel = Tunnel(Settings.from_env({}), OutboxStore(engine), RateLimits(), TunnelStats())
    made = Ingest(tunnel, inbox)
    yield made
    await tunnel.writer.close()
