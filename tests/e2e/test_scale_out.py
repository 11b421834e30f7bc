"""The built app scaled out: `reflex run --env prod` with REDIS_URL (Reflex's Redis state manager),
two backend workers (GRANIAN_WORKERS) and PostgreSQL, as the README's "Deploying" describes.

Runs last (tests/conftest.py): its `reflex run` rebuilds the same static files the session's app
serves, so nothing may use that app afterwards."""

from __future__ import annotations

import asyncio
import concurrent.futures
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy
from playwright.sync_api import Page, expect

from app.console.accounts import hash_password
from plugin_support.envelopes import error_event
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import LOG_DIR, VIEWER, VIEWER_PASSWORD
from tests.e2e.local_dsn import local_dsn
from tests.e2e.triage import drive_triage
from tests.services import Postgres, Redis, children

WORKERS = 2


@pytest.fixture(scope="module")
def scaled_app(postgres_server: Postgres, redis_server: Redis) -> Iterator[AppServer]:
    name = f"scaled_{uuid.uuid4().hex[:8]}"
    admin = sqlalchemy.create_engine(postgres_server.url(), isolation_level="AUTOCOMMIT", poolclass=sqlalchemy.pool.NullPool)
    with admin.connect() as connection:
        connection.exec_driver_sql(f"CREATE DATABASE {name}")
    server = AppServer(
        log_path=LOG_DIR / f"scaled-{time.strftime('%Y%m%d-%H%M%S')}.log",
        env={"DATABASE_URL": postgres_server.url(name), "REDIS_URL": redis_server.url,
             "GRANIAN_WORKERS": str(WORKERS), "SENTRY_DSN": "",
             "LOOKOUT_CONSOLE_USERS": f"{VIEWER}:viewer:{hash_password(VIEWER_PASSWORD)}"},
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()
        with admin.connect() as connection:
            connection.exec_driver_sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.dispose()


def workers(server: AppServer) -> list[int]:
    """The processes serving the app: the children of the `reflex run` process."""
    assert server._process is not None
    return children(server._process.pid)


async def post_envelopes(url: str, bodies: list[bytes]) -> list[int]:
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=16), timeout=30) as client:
        answers = await asyncio.gather(*(client.post(f"{url}/monitoring", content=body) for body in bodies))
    return [answer.status_code for answer in answers]


def test_two_workers_share_state_in_redis_and_the_inbox_in_postgresql(scaled_app: AppServer, page: Page) -> None:
    assert len(workers(scaled_app)) == WORKERS
    message = f"scaled out {uuid.uuid4().hex[:8]}"
    page.goto(scaled_app.url + "/issues")
    expect(page.locator("#issues-table")).to_be_visible(timeout=15_000)
    bodies = [error_event(str(local_dsn(scaled_app)), message=f"{message} #{n}") for n in range(200)]
    with concurrent.futures.ThreadPoolExecutor(1) as thread:  # Playwright's loop owns this thread
        answers = thread.submit(asyncio.run, post_envelopes(scaled_app.url, bodies)).result()
    assert answers == [200] * len(bodies)
    row = page.locator(".issue-row", has_text=message)
    expect(row).to_be_visible(timeout=20_000)  # live: the page's state lives in Redis
    issues = httpx.get(f"{scaled_app.url}/api/inbox/issues").json()["issues"]
    [issue] = [i for i in issues if message in i["title"]]
    for _ in range(60):  # both workers committed; the feeder (one worker, by lease) reads them all
        if issue["event_count"] == len(bodies):
            break
        time.sleep(0.5)
        issue = httpx.get(f"{scaled_app.url}/api/inbox/issues/{issue['id']}").json()
    assert issue["event_count"] == len(bodies)  # every envelope once, none twice
    row.locator(".issue-title").click()
    # The page reads the issue once it is open (on_load, in a thread): on a machine busy with the other
    # test processes that took over the 5 s default, while the page said it was loading.
    expect(page.locator("#issue-status")).to_have_text("unresolved", timeout=20_000)
    page.click("#issue-resolve")
    expect(page.locator("#issue-status")).to_have_text("resolved")
    assert httpx.get(f"{scaled_app.url}/api/inbox/issues/{issue['id']}").json()["status"] == "resolved"


def test_triage_on_postgresql(scaled_app: AppServer, page: Page) -> None:
    """tests/e2e/triage.py's flow (search in the URL, bulk resolve, merge, assignment, comment) with the
    inbox in PostgreSQL and the page's state in Redis, across two workers."""
    drive_triage(page, scaled_app)
