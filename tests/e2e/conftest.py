"""Session fixtures for browser tests: one built app and one Chromium for the whole run, and
another machine (a network namespace, tests/netns.py) with a Chromium of its own.

The app's log is kept under tests/e2e/logs/ when a test failed (and printed on start-up
failure); otherwise it is removed. Processes and the namespace are always removed, whatever happened.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from app.console.accounts import hash_password
from tests import netns
from tests.e2e.app_server import AppServer
from tests.e2e.captured import Outbox
from tests.e2e.chromium import CHROMIUM, CHROMIUM_FLAGS
from tests.e2e.helpers import LOG_DIR, VIEWER, VIEWER_PASSWORD, tree_state

E2E_DATABASE = "e2e.db"


@pytest.fixture(scope="session")
def app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    database = tmp_path_factory.mktemp("db") / E2E_DATABASE
    server = AppServer(
        log_path=LOG_DIR / f"app-{time.strftime('%Y%m%d-%H%M%S')}.log",
        # A database of its own: the tests never touch the developer's lookout.db.
        # No raw envelope is deleted during the run (cap 5,000 by default; the hostile-client runs make
        # ~12,000): the home page's "kept" figure must not shrink between two readings of a test.
        # Retention has tests of its own.
        # Nor an event: the hostile-client runs store tens of thousands of error events, and a test that
        # counts events before and after must not see retention's cut (10,000 per project by default).
        env={"DATABASE_URL": f"sqlite:///{database}", "SENTRY_DSN": "", "LOOKOUT_INBOX_MAX_RAW_ENVELOPES": "1000000",
             "LOOKOUT_INBOX_MAX_EVENTS": "1000000",
             "LOOKOUT_CONSOLE_USERS": f"{VIEWER}:viewer:{hash_password(VIEWER_PASSWORD)}",
             # The alerts page's tests add webhooks on loopback (tests/e2e/test_alerts.py).
             "LOOKOUT_WEBHOOK_ALLOW": "127.0.0.1"},
    )
    server.tree_before = tree_state()
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
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as started:
        yield started


def launched(playwright: Playwright, executable: Path | str = CHROMIUM) -> Iterator[Browser]:
    """A Chromium for a fixture to `yield from`: closed afterwards."""
    browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
    try:
        yield browser
    finally:
        browser.close()


def new_page(browser: Browser) -> Iterator[Page]:
    """A page in a context of its own for a fixture to `yield from`: closed afterwards."""
    context = browser.new_context()
    try:
        yield context.new_page()
    finally:
        context.close()


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    yield from launched(playwright)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    yield from new_page(browser)


@pytest.fixture(scope="session")
def browser_elsewhere(playwright: Playwright, elsewhere: netns.Namespace,
                      tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """Chromium on the other machine (tests/conftest.py's `elsewhere`, where the app is at
    `app_server.url_at(elsewhere.host_address)`): Playwright drives it over a pipe, which
    `ip netns exec` passes on."""
    wrapper = tmp_path_factory.mktemp("chromium") / "chromium-elsewhere"
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.join(elsewhere.command(CHROMIUM))} "$@"\n')
    wrapper.chmod(0o755)
    yield from launched(playwright, wrapper)


@pytest.fixture
def page_elsewhere(browser_elsewhere: Browser) -> Iterator[Page]:
    yield from new_page(browser_elsewhere)
