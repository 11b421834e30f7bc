"""The docs' screenshots, taken from the real app in Chromium so that they stay current: the app is
built and started with a database of its own, a shop on the real `sentry-sdk` reports an error into
it (tests/e2e/shop.py), and the issues list, the issue page and the trace page are saved as PNG. Then
the app runs in dev mode (`reflex run`, as `make run` does), its /try page throws in the browser and
in a handler, and the plugin's dev overlay listing both is saved (OVERLAY_SHOT).

    make screenshots                                   # into docs/images/
    .venv/bin/python -m tests.e2e.screenshots DIR      # into DIR

tests/e2e/test_screenshots.py takes them on the session's app, so a page that stops rendering fails
the run.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

from tests.e2e.app_server import ROOT, AppServer
from tests.e2e.chromium import CHROMIUM, CHROMIUM_FLAGS
from tests.e2e.helpers import inbox_event
from tests.e2e.shop import report

# (file name, what it shows): README.md shows the first, docs/inbox-and-console.md all three.
SHOTS = (("console.png", "the issues list"), ("issue.png", "an issue"), ("trace.png", "its trace"))
OVERLAY_SHOT = ("dev-overlay.png", "the dev overlay")  # docs/dev-overlay.md
VIEWPORT = {"width": 1280, "height": 860}
WAIT_MS = 30_000


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
    with tempfile.TemporaryDirectory(prefix="lookout-shots-") as scratch:
        work = Path(scratch)
        server = AppServer(work / "app.log", env={"DATABASE_URL": f"sqlite:///{work / 'shots.db'}", "SENTRY_DSN": ""})
        server.start()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
                for written in take(browser.new_page(), server, output, work):
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
