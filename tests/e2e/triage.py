"""Triage in Chromium, as a team works the inbox (issue 23): a search in the URL (and Back), a bulk
resolve of every match, a merge after which a new event of either fingerprint lands in the merged
issue, an assignment found again with `assigned:`, and a comment in the issue's timeline. Driven
against the session's app on SQLite (tests/e2e/test_triage.py) and against the scaled-out app on
PostgreSQL (tests/e2e/test_scale_out.py)."""

from __future__ import annotations

import json
import time
import uuid
from urllib.parse import parse_qs, quote, urlsplit

import httpx
from playwright.sync_api import Locator, Page, expect

from plugin_support.envelopes import build
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import VIEWER
from tests.e2e.local_dsn import local_dsn

WAIT_MS = 20_000  # for an answer of the app, on a machine busy with the other test processes


def post_event(server: AppServer, kind: str, value: str, tags: dict[str, str] | None = None) -> str:
    """An error event through the tunnel (as an SDK posts it); its id."""
    event_id = uuid.uuid4().hex
    event = {"event_id": event_id, "level": "error", "platform": "python", "environment": "production",
             "tags": tags or {}, "exception": {"values": [{"type": kind, "value": value, "stacktrace": {"frames": [
                 {"module": "shop.cart", "function": "checkout", "in_app": True}]}}]}}
    body = build(str(local_dsn(server)), [("event", json.dumps(event).encode())])
    assert httpx.post(server.url + "/monitoring", content=body, headers={"Origin": server.url}).status_code == 200
    return event_id


def issues_of(server: AppServer, query: str, count: int, timeout: float = 30) -> list[dict]:
    """The issues the JSON API finds for `query`, once there are `count` of them."""
    deadline = time.monotonic() + timeout
    while True:
        found = httpx.get(f"{server.url}/api/inbox/issues", params={"query": query, "status": ""}, timeout=timeout).json()
        if len(found["issues"]) == count or time.monotonic() > deadline:
            assert len(found["issues"]) == count, found
            return found["issues"]
        time.sleep(0.3)


def tick(box: Locator) -> None:
    """Tick a checkbox whose state the server holds: it shows ticked once the answer is back."""
    box.click()
    expect(box).to_be_checked(timeout=WAIT_MS)


def open_search(page: Page, server: AppServer, query: str) -> None:
    page.goto(f"{server.url}/issues?query={quote(query)}")
    expect(page.locator("#issues-table")).to_be_visible(timeout=WAIT_MS)


def drive_triage(page: Page, server: AppServer) -> None:
    marker = f"triage{uuid.uuid4().hex[:8]}"
    post_event(server, "CartError", f"{marker} cart", {"customer.tier": "gold"})
    post_event(server, "CartAliasError", f"{marker} alias", {"customer.tier": "silver"})
    post_event(server, "PaymentError", f"{marker} payment")
    issues_of(server, marker, 3)
    issues_of(server, f"has:customer.tier {marker}", 2)  # tags are counted within a second of the events

    # A search in the URL: a link is a search.
    open_search(page, server, f"customer.tier:gold {marker}")
    expect(page.locator(".issue-row")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator(".issue-row")).to_contain_text("CartError", timeout=WAIT_MS)
    # Editing it updates the URL; Back goes to the search before.
    page.fill("#issues-search", f"!customer.tier:gold {marker}")
    page.press("#issues-search", "Enter")
    expect(page.locator(".issue-row")).to_have_count(2, timeout=WAIT_MS)
    assert parse_qs(urlsplit(page.url).query)["query"] == [f"!customer.tier:gold {marker}"]
    page.go_back()
    expect(page.locator(".issue-row")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator("#issues-search")).to_have_value(f"customer.tier:gold {marker}", timeout=WAIT_MS)

    # A bulk resolve of every issue the search matches.
    open_search(page, server, f"is:unresolved {marker}")
    expect(page.locator(".issue-row")).to_have_count(3, timeout=WAIT_MS)
    tick(page.locator("#issues-all-matching"))
    page.click("#bulk-resolve")
    expect(page.locator("#issues-notice")).to_have_text("3 of 3 issues resolved.", timeout=WAIT_MS)
    expect(page.locator(".issue-row")).to_have_count(0, timeout=WAIT_MS)
    assert {i["status"] for i in issues_of(server, f"is:resolved {marker}", 3)} == {"resolved"}

    # A merge of two picked issues; then a new event of either fingerprint lands in the merged one.
    open_search(page, server, f"has:customer.tier {marker}")
    expect(page.locator(".issue-row")).to_have_count(2, timeout=WAIT_MS)
    for row in page.locator(".issue-row").all():
        tick(row.locator(".issue-pick"))
    page.click("#bulk-merge")
    expect(page.locator("#issues-notice")).to_contain_text("merged", timeout=WAIT_MS)
    expect(page.locator(".issue-row")).to_have_count(1, timeout=WAIT_MS)
    [merged] = issues_of(server, f"has:customer.tier {marker}", 1)
    post_event(server, "CartAliasError", f"{marker} alias", {"customer.tier": "silver"})
    post_event(server, "CartError", f"{marker} cart", {"customer.tier": "gold"})
    deadline = time.monotonic() + 30
    while (found := issues_of(server, f"has:customer.tier {marker}", 1)[0])["event_count"] < 4:
        assert time.monotonic() < deadline, found
        time.sleep(0.3)
    assert found["id"] == merged["id"] and found["event_count"] == 4

    # An assignment, found again with `assigned:`.
    open_search(page, server, f"has:customer.tier {marker}")
    tick(page.locator(".issue-row .issue-pick"))
    page.select_option("#bulk-assign", f"assign:{VIEWER}")
    expect(page.locator("#issues-notice")).to_have_text(f"1 of 1 issue assigned to {VIEWER}.", timeout=WAIT_MS)
    open_search(page, server, f"assigned:{VIEWER} {marker}")
    expect(page.locator(".issue-row")).to_have_count(1, timeout=WAIT_MS)
    expect(page.locator(".issue-row .issue-assignee")).to_have_text(VIEWER, timeout=WAIT_MS)

    # A comment, in the issue's timeline with the merge, the resolve and the assignment.
    page.locator(".issue-row .issue-title").click()
    expect(page.locator("#issue-status")).to_be_visible(timeout=WAIT_MS)
    comment = f"Looked into {marker}: the <b>cart</b> service"
    page.fill("#issue-comment-body", comment)
    page.click("#issue-comment-add")
    timeline = page.locator("#issue-timeline")
    expect(timeline).to_contain_text(comment, timeout=WAIT_MS)  # as text, never HTML
    for entry in ("resolved", "merged", f"assigned to {VIEWER}"):
        expect(timeline).to_contain_text(entry, timeout=WAIT_MS)
    assert page.locator("#issue-timeline b").count() == 0
