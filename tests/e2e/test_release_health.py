"""Release health from the real SDKs (issue 40): a small shop whose front end is bundled by the pinned
esbuild with `@sentry/browser` and loaded in Chromium from an origin of its own on loopback, and whose
backend runs the real `sentry-sdk` in a process of its own, both reporting release "health-shop@2.0-…"
to a project of the built app.

Each page load is a session (the browser SDK's default browserSessionIntegration) of the user the page
names; an error thrown from a click, unhandled, makes it "unhandled": errored, not crashed (the page
lives on). Each backend job is an application-mode session; one raises unhandled and crashes. By hand:
8 sessions (5 pages, 3 jobs), 2 errored, 1 crashed; users ann, ben, cat and dan, of whom ben crashed:
crash-free sessions 87.5 %, crash-free users 75 %. /releases must read the same, and its row leads
to the release's chart and to its issues."""

from __future__ import annotations

import functools
import http.server
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import sqlalchemy
from playwright.sync_api import Browser, Page, expect

from app.releases import health
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import open_page
from tests.e2e.sessions import CRASHED, HEALTHY, send_sessions
from tests.e2e.test_other_app_maps import NODE_MODULES, TOOLS, run

SHOP_JS = """import * as Sentry from "@sentry/browser";

const shopper = new URLSearchParams(location.search).get("user");
Sentry.init({ dsn: window.SHOP_DSN, release: window.SHOP_RELEASE, initialScope: { user: { id: shopper } } });
window.shopLastEventId = () => Sentry.lastEventId();
document.getElementById("buy").addEventListener("click", () => {
  setTimeout(() => { throw new Error("Health shop: the basket crashed"); }, 0);
});
"""
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Health shop</title></head>
<body><button id="buy">Buy</button>
<script>window.SHOP_DSN = "{dsn}"; window.SHOP_RELEASE = "{release}";</script>
<script src="/shop.js"></script></body></html>
"""
# (user, throws): five page loads by three users; ann's second and cat's first throw.
LOADS = [("ann", False), ("ann", True), ("ben", False), ("cat", True), ("cat", False)]
# (user, ending): three backend jobs, one crashing (an exception nothing caught).
JOBS = [("dan", HEALTHY), ("ben", CRASHED), ("dan", HEALTHY)]
SESSIONS, CRASHES, ERRORS = 8, 1, 2


@pytest.fixture(scope="module")
def shop(app_server: AppServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The shop built and served, reporting to a project of its own: its project id, release and URL."""
    root = tmp_path_factory.mktemp("health-shop")
    (root / "shop.js").write_text(SHOP_JS)
    built = run([str(TOOLS / "esbuild"), str(root / "shop.js"), "--bundle", "--minify", "--format=iife",
                 f"--outfile={root / 'dist' / 'shop.js'}"], env={"NODE_PATH": str(NODE_MODULES)})
    assert built.returncode == 0, built.stderr
    host = app_server.url.removeprefix("http://")
    name = f"health-shop-{uuid.uuid4().hex[:6]}"
    added = run([sys.executable, "-m", "app.projects.registry", "--host", host, "add", name], env=app_server.env)
    assert added.returncode == 0, added.stderr
    dsn = added.stdout.strip()
    release = f"health-shop@2.0-{uuid.uuid4().hex[:6]}"
    (root / "dist" / "index.html").write_text(PAGE.format(dsn=dsn, release=release))
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root / "dist")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {"project": dsn.rsplit("/", 1)[1], "dsn": dsn, "release": release,
               "url": f"http://127.0.0.1:{server.server_port}"}
    finally:
        server.shutdown()


def shop_visits(browser: Browser, shop: dict[str, str]) -> None:
    """Each of LOADS in a tab of its own; a crash waits until the SDK has its event."""
    for user, crashes in LOADS:
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(f"{shop['url']}/index.html?user={user}")
            page.wait_for_function("() => typeof window.shopLastEventId === 'function'")
            if crashes:
                page.click("#buy")
                page.wait_for_function("() => !!window.shopLastEventId()")
            page.wait_for_timeout(300)  # the session's envelope is on its way (sent at init, and on the crash)
        finally:
            context.close()


def stored(app_server: AppServer, shop: dict[str, str], timeout: float = 30.0) -> health.ReleaseHealth | None:
    """The release as the running app's database holds it, once all its sessions and how they ended are
    in (the feeder reads them in), or as it is at the deadline."""
    engine = sqlalchemy.create_engine(app_server.env["DATABASE_URL"])
    deadline = time.monotonic() + timeout
    try:
        while True:
            found = health.releases(engine, int(shop["project"]), version=shop["release"])
            done = found and (found[0].sessions, found[0].crashed, found[0].errored) >= (SESSIONS, CRASHES, ERRORS)
            if done or time.monotonic() > deadline:
                return found[0] if found else None
            time.sleep(0.5)
    finally:
        engine.dispose()


def test_browser_and_backend_sessions_make_crash_free_figures_that_match_a_hand_count(
        app_server: AppServer, shop: dict[str, str], browser: Browser, page: Page, tmp_path: Path) -> None:
    shop_visits(browser, shop)
    send_sessions(tmp_path, shop["dsn"], {shop["release"]: JOBS})
    release = stored(app_server, shop)
    assert release is not None, "no session of the shop's release arrived"
    assert (release.sessions, release.crashed, release.errored, release.abnormal) == (SESSIONS, CRASHES, ERRORS, 0)
    assert release.crash_free_sessions == 87.5
    assert (release.users, release.crashed_users, release.crash_free_users) == (4, 1, 75.0)
    assert release.new_issues == 2  # the basket's error (browser) and the backend job's

    open_page(page, app_server, f"/releases?project={shop['project']}")
    row = page.locator("#releases .release-row").filter(has=page.get_by_text(shop["release"], exact=True))
    expect(row.locator(".release-sessions")).to_have_text("8", timeout=30_000)
    expect(row.locator(".release-crash-free-sessions")).to_have_text("87.5 %")
    expect(row.locator(".release-crash-free-users")).to_have_text("75 %")
    expect(row.locator(".release-errored")).to_have_text("2")
    expect(row.locator(".release-crashed")).to_have_text("1")
    expect(row.locator(".release-users")).to_have_text("4")
    href = row.locator(".release-issues").get_attribute("href") or ""  # its issues: the search of its release
    assert urlsplit(href).path == "/issues"
    assert parse_qs(urlsplit(href).query) == {"query": [f'release:"{shop["release"]}"'], "project": [shop["project"]]}
    row.locator(".release-chart-link").click()  # its chart, above the table
    chart = page.locator("#release-chart")
    expect(chart.locator("svg").first).to_be_visible(timeout=30_000)
    expect(page.locator("#release-chart-version")).to_have_text(shop["release"])
    assert parse_qs(urlsplit(page.url).query)["release"] == [shop["release"]]
    page.goto(app_server.url + href)  # the release's issues: the backend job's crash
    expect(page.get_by_text("KeyError: 'basket'").first).to_be_visible(timeout=30_000)
