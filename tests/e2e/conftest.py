"""Session fixtures for browser tests: one built app and one Chromium for the whole run, and
another machine (a network namespace, tests/netns.py) with a Chromium of its own.

The app's log is kept under tests/e2e/logs/ when a test failed (and printed on start-up
failure); otherwise it is removed. Processes and the namespace are always removed, whatever happened.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, Playwright, sync_playwright

from tests import netns
from tests.e2e.app_server import AppServer
from tests.e2e.captured import Outbox
from tests.e2e.chromium import CHROMIUM, CHROMIUM_FLAGS
from tests.e2e.helpers import started_app
from tests.e2e.page_log import PageLog

E2E_DATABASE = "e2e.db"


@pytest.fixture(scope="session")
def app_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    yield from started_app(request, tmp_path_factory.mktemp("db") / E2E_DATABASE, "app")


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
    """A page in a context of its own for a fixture to `yield from`: closed afterwards. What it did
    is in a failing test's report (`pytest_runtest_makereport`)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        _page_logs[page] = PageLog(page)
        try:
            yield page
        finally:
            del _page_logs[page]
    finally:
        context.close()


_page_logs: dict[Page, PageLog] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A failed browser test's report shows what each of its pages did (tests/e2e/page_log.py)."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]  # pluggy's hookwrapper result
    if report.failed and call.when == "call":
        for name, value in getattr(item, "funcargs", {}).items():
            if isinstance(value, Page) and value in _page_logs:
                report.sections.append((f"what page `{name}` did", _page_logs[value].text()))


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
