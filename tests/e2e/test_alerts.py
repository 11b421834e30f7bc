"""The alerts page in Chromium, on the built app: a maintainer adds a JSON webhook, its test alert
arrives signed, a browser error's new issue alerts it with the symbolicated culprit; a redirecting
webhook is not followed; a viewer from another machine sees the channels but changes nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterator

import pytest
import sqlalchemy
from playwright.sync_api import Page, expect

from app.inbox import states
from tests.alerts.receivers import Received, WebhookReceiver
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import TRY_MODULE, open_page, sign_in_from_refusal
from tests.netns import Namespace


@pytest.fixture
def hooks() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as server:
        yield server


def add_json_channel(page: Page, app_server: AppServer, url: str) -> tuple[int, str]:
    """Add a JSON webhook for every project on /alerts, as this machine (a maintainer): its id and
    the secret shown once."""
    page.goto(app_server.url + "/alerts")
    expect(page.locator("#alerts-channels")).to_be_visible(timeout=15_000)
    before = set(page.locator("[id^=alert-channel-]").evaluate_all("rows => rows.map(r => r.id)"))
    page.select_option("#channel-kind", "json")
    page.fill("#channel-target", url)
    page.click("#channel-add")
    secret = page.locator("#channel-secret-once")
    expect(secret).not_to_be_empty(timeout=15_000)
    expect(page.locator("[id^=alert-channel-]")).to_have_count(len(before) + 1)
    [new] = set(page.locator("[id^=alert-channel-]").evaluate_all("rows => rows.map(r => r.id)")) - before
    shown = (secret.text_content() or "").strip()
    return int(new.removeprefix("alert-channel-")), shown.split()[-1]


def signed(received: Received, secret: str) -> bool:
    expected = "sha256=" + hmac.new(secret.encode(), received.body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(received.headers.get("x-lookout-signature", ""), expected)


def test_a_maintainer_adds_a_webhook_tests_it_and_a_browser_error_alerts_it(
    app_server: AppServer, page: Page, hooks: WebhookReceiver
) -> None:
    channel, secret = add_json_channel(page, app_server, hooks.url("/hook"))
    row = page.locator(f"#alert-channel-{channel}")
    expect(row).not_to_contain_text(secret)  # shown once, never again
    expect(row).not_to_contain_text(hooks.url("/hook"))  # the URL is a secret too: masked
    page.click(f"#channel-test-{channel}")
    [test] = hooks.wait_for(1, timeout=30)
    assert test.path == "/hook" and signed(test, secret)
    assert [a["rule"] for a in json.loads(test.body)["alerts"]] == ["test"]

    # A browser error from code the build maps (the /try page's "Report an error"): its issue, new or
    # regressed (earlier tests may have made it; it is resolved first), alerts with the original frame.
    title = "Lookout try: a reported error"
    engine = sqlalchemy.create_engine(app_server.env["DATABASE_URL"], poolclass=sqlalchemy.pool.NullPool)
    with engine.begin() as connection:
        for (number,) in connection.execute(sqlalchemy.text(
                "select id from inbox_issue where title like :t and status in ('unresolved', 'regressed')"), {"t": f"%{title}"}):
            states.change(connection, number, states.RESOLVED, "e2e")
    engine.dispose()
    open_page(page, app_server, "/try")
    page.click("#try-report")
    deadline = time.monotonic() + 60
    found: list[dict] = []
    while not found:
        assert time.monotonic() < deadline, "no alert for the browser error's issue"
        found = [a for r in hooks.received for a in json.loads(r.body)["alerts"] if title in a["issue"]["title"]]
        page.wait_for_timeout(200)
    [alert] = found
    assert alert["rule"] in ("new", "regression") and alert["issue"]["url"].endswith(f"/issue?id={alert['issue']['id']}")
    assert alert["issue"]["culprit"] == f"{TRY_MODULE} in lookoutTry.report", alert  # symbolicated, not a chunk's URL
    assert all(signed(r, secret) for r in hooks.received)

    # The page shows the channel's last delivery; the maintainer removes it.
    page.goto(app_server.url + "/alerts")
    expect(page.locator(f"#alert-channel-{channel}")).not_to_contain_text("never", timeout=15_000)
    page.click(f"#channel-remove-{channel}")
    expect(page.locator(f"#alert-channel-{channel}")).to_have_count(0, timeout=15_000)


def test_a_redirecting_webhook_is_not_followed(app_server: AppServer, page: Page, hooks: WebhookReceiver) -> None:
    channel, _ = add_json_channel(page, app_server, hooks.url("/redirect"))
    page.click(f"#channel-test-{channel}")
    [asked] = hooks.wait_for(1, timeout=30)
    assert asked.path == "/redirect"
    expect(page.locator(f"#alert-channel-{channel}")).to_contain_text("redirect", timeout=30_000)
    assert {r.path for r in hooks.received} == {"/redirect"}  # tried again later, but the Location never
    page.click(f"#channel-remove-{channel}")
    expect(page.locator(f"#alert-channel-{channel}")).to_have_count(0, timeout=15_000)


def test_a_viewer_sees_the_channels_but_cannot_change_them(
    app_server: AppServer, page: Page, hooks: WebhookReceiver, elsewhere: Namespace, page_elsewhere: Page
) -> None:
    channel, _ = add_json_channel(page, app_server, hooks.url("/hook"))
    viewer = page_elsewhere  # Chromium on another machine (a network namespace)
    url = app_server.url_at(elsewhere.host_address)
    viewer.goto(url + "/alerts")
    expect(viewer.locator("#console-refused")).to_be_visible(timeout=15_000)
    expect(viewer.locator("#alerts-channels")).to_have_count(0)
    sign_in_from_refusal(viewer)
    viewer.goto(url + "/alerts")
    expect(viewer.locator(f"#alert-channel-{channel}")).to_be_visible(timeout=15_000)
    expect(viewer.locator("#alerts-readonly")).to_be_visible()
    for control in ("#channel-add", f"#channel-remove-{channel}", f"#channel-test-{channel}", "#rules-save"):
        expect(viewer.locator(control)).to_have_count(0)
    # The maintainer's page still has it, untouched; nothing was sent.
    page.goto(app_server.url + "/alerts")
    expect(page.locator(f"#alert-channel-{channel}")).to_be_visible(timeout=15_000)
    assert hooks.received == []
    page.click(f"#channel-remove-{channel}")
    expect(page.locator(f"#alert-channel-{channel}")).to_have_count(0, timeout=15_000)
