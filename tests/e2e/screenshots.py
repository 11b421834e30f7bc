"""The docs' screenshots, taken from the real app in Chromium so that they stay current: the app is
built and started with a database of its own, a shop on the real `sentry-sdk` reports an error into
it (tests/e2e/shop.py), and the issues list, the issue page and the trace page are saved as PNG
(SHOTS). Then the shop's health is fed in by real SDKs too (HEALTH_SHOTS): application sessions of
two releases (sentry-sdk), two cron jobs under `sentry_sdk.crons.monitor`, one failing, and two user
feedbacks made by Sentry's JavaScript SDK, one about the shop's error; /releases with the first
release's chart, /monitors and /feedback are saved. Then the app runs in dev mode (`reflex run`, as `make run`
does), its /try page throws in the browser and in a handler, and the plugin's dev overlay listing both
is saved (OVERLAY_SHOT).

    make screenshots                                   # into docs/images/
    .venv/bin/python -m tests.e2e.screenshots DIR      # into DIR

tests/e2e/test_screenshots.py takes them on the session's app, so a page that stops rendering fails
the run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect, sync_playwright

from tests.e2e.app_server import ROOT, AppServer
from tests.e2e.chromium import CHROMIUM, CHROMIUM_FLAGS
from tests.e2e.helpers import inbox_event
from tests.e2e.local_dsn import local_dsn
from tests.e2e.sessions import CRASHED, ERRORED, HEALTHY, send_sessions
from tests.e2e.shop import report

# (file name, what it shows): README.md shows the first, docs/inbox-and-console.md all three.
SHOTS = (("console.png", "the issues list"), ("issue.png", "an issue"), ("trace.png", "its trace"))
# docs/releases.md, docs/monitors.md and docs/inbox-and-console.md show one each.
HEALTH_SHOTS = (("releases.png", "release health"), ("monitors.png", "cron monitors"), ("feedback.png", "user feedback"))
OVERLAY_SHOT = ("dev-overlay.png", "the dev overlay")  # docs/dev-overlay.md
VIEWPORT = {"width": 1280, "height": 860}
WAIT_MS = 30_000

# (release, [(user, ending), ...]): 12 sessions of 5 users, 2 errored and 1 crashed; 6 healthy ones of 4.
RELEASES = (
    ("shop@2.1", [(f"user-{n % 5}", CRASHED if n == 7 else ERRORED if n in (3, 10) else HEALTHY) for n in range(12)]),
    ("shop@2.2", [(f"user-{n % 4}", HEALTHY) for n in range(6)]),
)
# Jobs under sentry-sdk's `crons.monitor`, in one process: argv 1 the DSN, 2 the jobs as JSON
# [[slug, "ok" or "fail", crontab], ...]; a failing one raises, and its check-in says error.
JOB = '''
import json
import sys

import sentry_sdk
from sentry_sdk.crons import monitor

sentry_sdk.init(dsn=sys.argv[1], environment="production", release="shop@2.2")
for slug, outcome, crontab in json.loads(sys.argv[2]):
    @monitor(monitor_slug=slug, monitor_config={"schedule": {"type": "crontab", "value": crontab},
                                                "checkin_margin": 5, "max_runtime": 10, "timezone": "UTC"})
    def job():
        if outcome == "fail":
            raise ConnectionError("the warehouse API refused the connection")
        return "done"

    try:
        job()
    except ConnectionError:
        pass
sentry_sdk.flush(10)
'''
# (slug, "ok" or "fail", crontab)
JOBS = (("nightly-export", "ok", "0 3 * * *"), ("stock-sync", "fail", "*/15 * * * *"))


def take(page: Page, server: AppServer, output: Path, work: Path) -> list[Path]:
    """Report the shop's error into `server`, then save SHOTS into `output`; the files written."""
    output.mkdir(parents=True, exist_ok=True)
    event_id, trace_id = report(server, work, "basket-42", kind="CardDeclined")
    issue_id = inbox_event(server, event_id)["issue_id"]
    page.set_viewport_size(VIEWPORT)
    written = []
    for (name, _), path, ready in zip(SHOTS, ("/issues", f"/issue?id={issue_id}", f"/trace?id={trace_id}"),
                                      ("#issues-table", "#issue-stack .stack-var", "#trace-errors .trace-error"),
                                      strict=True):
        page.goto(server.url + path)
        expect(page.locator(ready).first).to_be_visible(timeout=WAIT_MS)
        if name == "issue.png":  # its stack, with the outer frame's lines and locals, rather than the header
            page.evaluate("document.querySelector('#issue-stack').scrollIntoView({block: 'start'})")
        page.wait_for_timeout(500)  # fonts and charts settle
        page.screenshot(path=output / name)
        written.append(output / name)
    return written


def _run(script: Path, *args: str) -> None:
    subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60, check=True)


def _wait_for_sessions(page: Page, release: str, sessions: int) -> None:
    """Until /releases' row of `release` counts at least `sessions` (the page refreshes itself as the
    feeder reads them in)."""
    page.wait_for_function("""([release, sessions]) => [...document.querySelectorAll('#releases .release-row')].some(
        row => row.querySelector('.release-chart-link')?.textContent === release
               && Number(row.querySelector('.release-sessions')?.textContent) >= sessions)""",
                           arg=[release, sessions], timeout=WAIT_MS)


def take_health(page: Page, server: AppServer, output: Path, work: Path) -> list[Path]:
    """Feed `server` the shop's sessions, cron check-ins and a user feedback from real SDKs, then save
    HEALTH_SHOTS into `output`; the files written."""
    from tests.factories import sdk_feedback  # here: it needs plugin/tests on the path (main adds it)

    output.mkdir(parents=True, exist_ok=True)
    key = local_dsn(server).public_key
    dsn = f"http://{key}@127.0.0.1:{server.port}/1"
    send_sessions(work, dsn, dict(RELEASES))
    (work / "job.py").write_text(JOB)
    _run(work / "job.py", dsn, json.dumps(JOBS))
    event_id, _ = report(server, work, "basket-57", kind="CardDeclined")  # the issue `take` shows
    inbox_event(server, event_id)
    words = "I pressed Pay twice and it said my card was declined, but the bank shows the charge."
    for feedback in ({"message": "The size chart link on the product page goes nowhere.", "name": "Grace Hopper",
                      "email": "grace@example.com", "url": "https://shop.example/products/rain-jacket"},
                     {"message": words, "name": "Ada Lovelace", "email": "ada@example.com",
                      "url": "https://shop.example/checkout", "associatedEventId": event_id}):  # about the error
        posted = httpx.post(f"{server.url}/api/1/envelope/?sentry_key={key}", content=sdk_feedback(dsn, **feedback),
                            timeout=30)
        posted.raise_for_status()

    page.set_viewport_size(VIEWPORT)
    first, first_sessions = RELEASES[0]
    page.goto(f"{server.url}/releases?project=1&release={first.replace('@', '%40')}")  # its chart above the table
    for release, sessions in RELEASES:
        _wait_for_sessions(page, release, len(sessions))
    page.reload()  # the chart as read with every session in
    _wait_for_sessions(page, first, len(first_sessions))
    expect(page.locator("#release-chart svg").first).to_be_visible(timeout=WAIT_MS)
    written = [_shot(page, output / HEALTH_SHOTS[0][0])]
    page.goto(server.url + "/monitors")
    for slug, outcome, _ in JOBS:
        monitor = page.locator("#monitors .monitor").filter(has=page.get_by_text(slug, exact=True))
        expect(monitor.locator(".monitor-state")).to_have_text("ok" if outcome == "ok" else "error", timeout=WAIT_MS)
    written.append(_shot(page, output / HEALTH_SHOTS[1][0]))
    page.goto(server.url + "/feedback")
    expect(page.locator("#feedback-table .feedback-row").filter(has_text=words).first).to_be_visible(timeout=WAIT_MS)
    written.append(_shot(page, output / HEALTH_SHOTS[2][0]))
    return written


def _shot(page: Page, path: Path) -> Path:
    page.wait_for_timeout(500)  # fonts and charts settle
    page.screenshot(path=path)
    return path


def take_overlay(page: Page, server: AppServer, output: Path) -> Path:
    """On `server` in dev mode: /try's browser error and handler error, then the overlay opened on them."""
    page.set_viewport_size(VIEWPORT)
    page.goto(server.url + "/try")
    badge = page.locator("lookout-dev-overlay #lookout-dev-badge")
    expect(badge).to_have_text("0 errors", timeout=WAIT_MS)
    page.click("#try-thrown")
    expect(badge).to_have_text("1 error", timeout=WAIT_MS)
    page.click("#try-backend-raise")
    expect(badge).to_have_text("2 errors", timeout=WAIT_MS)
    badge.click()
    expect(page.locator("lookout-dev-overlay .lookout-mapped").first).to_be_visible(timeout=WAIT_MS)
    page.wait_for_timeout(1500)  # the handler's trace, a poll later
    path = output / OVERLAY_SHOT[0]
    page.screenshot(path=path)
    return path


def main(output: Path) -> None:
    sys.path.append(str(ROOT / "plugin" / "tests"))  # as pytest.ini's pythonpath: tests.factories' helpers
    with tempfile.TemporaryDirectory(prefix="lookout-shots-") as scratch:
        work = Path(scratch)
        server = AppServer(work / "app.log", env={"DATABASE_URL": f"sqlite:///{work / 'shots.db'}", "SENTRY_DSN": ""})
        server.start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
                shop = browser.new_page()
                for written in [*take(shop, server, output, work), *take_health(shop, server, output, work)]:
                    print(written)
                server.stop()
                dev = AppServer(work / "dev.log", dev=True,
                                env={"DATABASE_URL": f"sqlite:///{work / 'dev.db'}", "SENTRY_DSN": ""})
                dev.start()
                try:
                    print(take_overlay(browser.new_page(), dev, output))
                finally:
                    dev.stop()
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "images")
