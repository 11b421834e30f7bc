"""Session fixtures for browser tests: one built app and one Chromium for the whole run.

The app's log is kept under tests/e2e/logs/ when a test failed (and printed on start-up
failure); otherwise it is removed. Processes are always stopped, whatever happened.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from app.inbox.accounts import hash_password
from tests.e2e.app_server import AppServer
from tests.e2e.chromium import CHROMIUM, CHROMIUM_FLAGS
from tests.e2e.captured import Outbox

LOG_DIR = Path(__file__).parent / "logs"
E2E_DATABASE = "e2e.db"
# A console user for the tests that come from another address (tests/e2e/test_console.py).
VIEWER, VIEWER_PASSWORD = "e2e-viewer", "e2e-viewer-password"


@pytest.fixture(scope="session")
def app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    database = tmp_path_factory.mktemp("db") / E2E_DATABASE
    server = AppServer(
        log_path=LOG_DIR / f"app-{time.strftime('%Y%m%d-%H%M%S')}.log",
        # A database of its own: the tests never touch the developer's lookout.db.
        env={"DATABASE_URL": f"sqlite:///{database}", "SENTRY_DSN": "",
             "LOOKOUT_CONSOLE_USERS": f"{VIEWER}:viewer:{hash_password(VIEWER_PASSWORD)}"},
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()
        if request.session.testsfailed:
            print(f"\napp log kept at {server.log_path}")
        else:
            server.log_path.unlink(missing_ok=True)


@pytest.fixture
def outbox(app_server: AppServer) -> Outbox:
    """What the app's tunnel stored (local mode: every accepted envelope)."""
    return Outbox(Path(app_server.env["DATABASE_URL"].removeprefix("sqlite:///")))


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()
