"""Lookout's report-only Content Security Policy in Chromium: a violation on a console page is
reported by the browser itself to the app's own security endpoint and becomes an issue titled as
Sentry titles it, while the pages as built violate nothing."""

from __future__ import annotations

import time

from playwright.sync_api import Page

from tests.e2e.app_server import AppServer
from tests.e2e.helpers import open_page
from tests.services import read_value

BLOCKED = "http://127.0.0.2:65000/csp-probe.png"  # img-src is 'self' data: blob:; nothing listens there
TITLE = "Blocked 'image' from '127.0.0.2:65000'"
SECURITY_TITLES = "select group_concat(title, ' | ') from inbox_issue where title like 'Blocked %'"


def test_a_violation_in_the_console_becomes_an_issue_of_its_own_project(app_server: AppServer, page: Page) -> None:
    open_page(page, app_server, "/")
    page.evaluate("src => { const image = new Image(); image.src = src; document.body.append(image); }", BLOCKED)
    deadline = time.monotonic() + 30
    while TITLE not in str(found := read_value(app_server.env["DATABASE_URL"], SECURITY_TITLES)):
        assert time.monotonic() < deadline, f"no issue {TITLE!r} within 30 s (security issues: {found})"
        page.wait_for_timeout(200)
    assert found == TITLE  # the page itself, as built, violated nothing (its reports came before this one)
