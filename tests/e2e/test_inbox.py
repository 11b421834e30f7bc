"""Local mode in the built app: what the browser and the backend report is read into the inbox."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx
from playwright.sync_api import Page, expect

from plugin_support.envelopes import build
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import inbox_event, open_page
from tests.e2e.local_dsn import local_dsn


def test_browser_and_backend_errors_become_issues_in_the_inbox(app_server: AppServer, page: Page) -> None:
    open_page(page, app_server, "/try")
    page.click("#try-report")
    expect(page.locator("#try-confirmation")).to_contain_text("sent as event", timeout=10_000)
    browser_id = page.locator("#try-confirmation").text_content().split("event ")[1].rstrip(".")
    stored = inbox_event(app_server, browser_id)
    assert stored["event"]["exception"]["values"][-1]["value"] == "Lookout try: a reported error"
    issue = httpx.get(f"{app_server.url}/api/inbox/issues/{stored['issue_id']}").json()
    assert issue["title"] == "Error: Lookout try: a reported error" and issue["status"] == "unresolved"

    page.click("#try-backend-raise")
    expect(page.get_by_text("Something went wrong on our side.")).to_be_visible(timeout=10_000)
    listed = httpx.get(f"{app_server.url}/api/inbox/issues").json()["issues"]
    deadline = time.monotonic() + 15
    while not any(i["title"] == "RuntimeError: Lookout try: a backend error" for i in listed):
        assert time.monotonic() < deadline, [i["title"] for i in listed]
        time.sleep(0.2)
        listed = httpx.get(f"{app_server.url}/api/inbox/issues").json()["issues"]
    [backend] = [i for i in listed if i["title"] == "RuntimeError: Lookout try: a backend error"]
    assert backend["culprit"] == "app.pages.try_errors in raise_error"


def test_another_apps_sentry_sdk_reports_into_the_inbox_with_a_lookout_dsn(app_server: AppServer) -> None:
    """A separate Python process with the real sentry-sdk, its DSN naming this app (as the home
    page would show it): its event arrives through /api/1/envelope/ and becomes an issue."""
    dsn = f"http://{local_dsn(app_server).public_key}@127.0.0.1:{app_server.port}/1"
    script = (
        "import sentry_sdk\n"
        f"sentry_sdk.init(dsn={dsn!r}, traces_sample_rate=0)\n"
        "try:\n    1 / 0\nexcept ZeroDivisionError:\n    print(sentry_sdk.capture_exception())\n"
        "sentry_sdk.flush(10)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    event_id = done.stdout.strip()
    stored = inbox_event(app_server, event_id)
    assert stored["event"]["exception"]["values"][-1]["type"] == "ZeroDivisionError"
    issue = httpx.get(f"{app_server.url}/api/inbox/issues/{stored['issue_id']}").json()
    assert issue["title"] == "ZeroDivisionError: division by zero"


def test_the_home_page_shows_the_dsn_to_paste_into_another_app(app_server: AppServer, page: Page) -> None:
    page.goto(app_server.url + "/")
    key = local_dsn(app_server).public_key
    assert key != "lookout" and len(key) == 32  # random per install, not the old public one
    expect(page.locator("#inbox-dsn")).to_have_text(f"http://{key}@127.0.0.1:{app_server.port}/1")


def test_session_updates_and_discards_are_counted_on_the_home_page(app_server: AppServer, page: Page) -> None:
    """(The browser SDK sends sessions only when a release is set; the e2e app has none, so the
    session comes as any SDK with a release would send it, through the tunnel.)"""
    session = {"sid": "e2e", "status": "crashed", "attrs": {"release": "shop@1", "environment": "e2e"}}
    report = {"discarded_events": [{"reason": "ratelimit_backoff", "category": "error", "quantity": 3}]}
    body = build(str(local_dsn(app_server)),
                 [("session", json.dumps(session).encode()), ("client_report", json.dumps(report).encode())])
    assert httpx.post(app_server.url + "/monitoring", content=body, headers={"Origin": app_server.url}).status_code == 200
    deadline = time.monotonic() + 15
    while True:
        page.goto(app_server.url + "/")
        counts = page.locator("#inbox-counts")
        expect(counts).to_be_attached()
        if "Sessions crashed" in (counts.text_content() or "") or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    expect(counts).to_contain_text("Sessions crashed")
    expect(counts).to_contain_text("Discarded by SDKs (ratelimit_backoff)")
