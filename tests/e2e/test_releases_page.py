"""The /releases page in the built app, fed by the real sentry-sdk: a process with `release=` runs four
application sessions of four users, one of them crashing (an unhandled exception), and the page lists
the release with its 4 sessions, 75 % crash-free, its chart, and a link to its issues, which lists the crash."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page, expect

from tests.e2e.app_server import AppServer
from tests.e2e.helpers import open_page
from tests.e2e.local_dsn import local_dsn

SESSIONS = '''
import sys

import sentry_sdk
from sentry_sdk.utils import event_from_exception

sentry_sdk.init(dsn=sys.argv[1], release=sys.argv[2], environment="e2e")
scope = sentry_sdk.get_isolation_scope()
for number in range(4):
    scope.set_user({"id": f"e2e-user-{number}"})
    scope.start_session()
    if number == 3:  # the last one crashes: an exception no handler caught
        try:
            raise RuntimeError("the release's crash")
        except RuntimeError:
            event, hint = event_from_exception(sys.exc_info(), client_options=sentry_sdk.get_client().options,
                                               mechanism={"type": "test", "handled": False})
            sentry_sdk.capture_event(event, hint=hint)
    scope.end_session()
sentry_sdk.flush(10)
'''


def test_a_releases_sessions_are_its_health_with_a_link_to_its_issues_and_a_chart(
        app_server: AppServer, page: Page, tmp_path: Path) -> None:
    release = f"e2e-shop@{uuid.uuid4().hex[:8]}"
    script = tmp_path / "sessions.py"
    script.write_text(SESSIONS)
    dsn = f"http://{local_dsn(app_server).public_key}@127.0.0.1:{app_server.port}/1"
    subprocess.run([sys.executable, str(script), dsn, release], capture_output=True, text=True, timeout=60, check=True)
    open_page(page, app_server, "/releases")
    row = page.locator("#releases .release-row").filter(has=page.get_by_text(release, exact=True))
    # The page refreshes itself, as the feeder reads the sessions in.
    expect(row.locator(".release-sessions")).to_have_text("4", timeout=30_000)
    expect(row.locator(".release-crash-free-sessions")).to_have_text("75 %")
    expect(row.locator(".release-crash-free-users")).to_have_text("75 %")  # e2e-user-3 crashed
    expect(row.locator(".release-crashed")).to_have_text("1")
    expect(row.locator(".release-users")).to_have_text("4")
    expect(row.locator(".release-issues")).to_be_visible()
    href = row.locator(".release-issues").get_attribute("href") or ""
    assert urlsplit(href).path == "/issues" and release in href.replace("%40", "@")
    assert parse_qs(urlsplit(href).query)["query"] == [f'release:"{release}"']
    row.locator(".release-chart-link").click()
    chart = page.locator("#release-chart")
    expect(chart).to_be_visible(timeout=30_000)
    expect(chart.locator("svg").first).to_be_visible()
    expect(page.locator("#release-chart-version")).to_have_text(release)
    assert parse_qs(urlsplit(page.url).query)["release"] == [release]
    page.goto(app_server.url + href)  # the release's issues: the crash's
    expect(page.get_by_text("the release's crash").first).to_be_visible(timeout=30_000)
