"""The /releases page in the built app, fed by the real sentry-sdk: a process with `release=` runs four
application sessions of four users, one of them crashing (an unhandled exception), and the page lists
the release with its 4 sessions, 75 % crash-free, its chart, and a link to its issues, which lists the crash."""

from __future__ import annotations

import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import Page, expect

from tests.e2e.app_server import AppServer
from tests.e2e.helpers import open_page
from tests.e2e.local_dsn import local_dsn
from tests.e2e.sessions import CRASHED, HEALTHY, send_sessions


def test_a_releases_sessions_are_its_health_with_a_link_to_its_issues_and_a_chart(
        app_server: AppServer, page: Page, tmp_path: Path) -> None:
    release = f"e2e-shop@{uuid.uuid4().hex[:8]}"
    dsn = f"http://{local_dsn(app_server).public_key}@127.0.0.1:{app_server.port}/1"
    send_sessions(tmp_path, dsn, release, [(f"e2e-user-{n}", CRASHED if n == 3 else HEALTHY) for n in range(4)])
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
    expect(page.get_by_text("KeyError: 'basket'").first).to_be_visible(timeout=30_000)
