"""Issue 40's pages in the built app, fed by real SDKs: a job under sentry-sdk's `crons.monitor` is listed on
/monitors with its check-in, and a feedback made by Sentry's JavaScript SDK (`captureFeedback`) on /feedback,
linked to the issue of the error it names."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.app_server import AppServer
from tests.e2e.helpers import inbox_event, open_page
from tests.e2e.local_dsn import local_dsn
from tests.e2e.shop import report
from tests.factories import sdk_feedback

JOB = '''
import sys

import sentry_sdk
from sentry_sdk.crons import monitor

sentry_sdk.init(dsn=sys.argv[1], environment="e2e")


@monitor(monitor_slug=sys.argv[2], monitor_config={"schedule": {"type": "interval", "value": 1, "unit": "hour"},
                                                   "checkin_margin": 5, "max_runtime": 10, "timezone": "UTC"})
def nightly_export():
    return "done"


nightly_export()
sentry_sdk.flush(10)
'''


def test_a_monitored_job_is_listed_with_its_check_in(app_server: AppServer, page: Page, tmp_path: Path) -> None:
    slug = f"nightly-export-{uuid.uuid4().hex[:8]}"
    script = tmp_path / "job.py"
    script.write_text(JOB)
    dsn = f"http://{local_dsn(app_server).public_key}@127.0.0.1:{app_server.port}/1"
    subprocess.run([sys.executable, str(script), dsn, slug], capture_output=True, text=True, timeout=60, check=True)
    open_page(page, app_server, "/monitors")
    monitor = page.locator("#monitors").get_by_text(slug)
    expect(monitor).to_be_visible(timeout=30_000)  # the page refreshes itself, as the feeder reads the check-ins in
    expect(page.locator("#monitors")).to_contain_text("ok")


def test_a_feedback_is_listed_with_a_link_to_its_errors_issue(app_server: AppServer, page: Page, tmp_path: Path) -> None:
    event_id, _ = report(app_server, tmp_path, "basket-feedback", kind="FeedbackNamedError")
    issue_id = inbox_event(app_server, event_id)["issue_id"]
    words = f"The pay button did nothing <b>{uuid.uuid4().hex[:6]}</b>"
    key = local_dsn(app_server).public_key
    body = sdk_feedback(f"http://{key}@127.0.0.1:{app_server.port}/1", message=words, name="Ada",
                        email="ada@example.com", url="https://shop.example/cart", associatedEventId=event_id)
    posted = httpx.post(f"{app_server.url}/api/1/envelope/?sentry_key={key}", content=body, timeout=30)
    assert posted.status_code == 200, posted.text
    open_page(page, app_server, "/feedback")
    row = page.locator("#feedback-table").get_by_text(words)  # as text: the <b> is not markup
    expect(row).to_be_visible(timeout=30_000)
    expect(page.locator(f'#feedback-table a[href="/issue?id={issue_id}"]').first).to_be_visible()
    page.locator(f'#feedback-table a[href="/issue?id={issue_id}"]').first.click()  # and on the issue's own page
    expect(page.locator(".issue-feedback").filter(has_text=words)).to_be_visible(timeout=30_000)
    expect(page.locator(".issue-feedback-url").first).to_have_text("https://shop.example/cart")
