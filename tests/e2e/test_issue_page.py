"""The console as a team reads an error (issue 24), in Chromium: a real `sentry-sdk` app reports an
error inside a transaction with a log line, from an outer frame holding a local variable, with a
browser context. The issue page shows the outer frame's source line and local value and the contexts
as tables, says "1 event" and links to the trace; the trace page lists the error and the log line; the
log line on /logs links to that trace and to the error. Browsing the console adds no transaction of
its own refresh loop. Another test session started in the same project folder meanwhile waits for
this one (tests/e2e/app_server.py): its build would replace the files this session's app serves."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.e2e.app_server import ROOT, AppServer
from tests.e2e.helpers import inbox_event
from tests.e2e.shop import report
from tests.services import read_value, stop_group

WAIT_MS = 20_000  # for an answer of the app, on a machine busy with the other test processes

def test_an_error_reads_like_sentrys_and_links_to_its_trace_and_log_line(
    app_server: AppServer, page: Page, tmp_path: Path
) -> None:
    marker = f"basket{uuid.uuid4().hex[:8]}"
    kind = f"Declined{uuid.uuid4().hex[:6]}"  # an issue of this test's own
    event_id, trace_id = report(app_server, tmp_path, marker, kind)
    issue_id = inbox_event(app_server, event_id)["issue_id"]

    page.goto(f"{app_server.url}/issue?id={issue_id}")
    expect(page.locator("#issue-count")).to_have_text("1 event", timeout=WAIT_MS)
    stack = page.locator("#issue-stack")
    expect(stack.locator(".stack-context-current", has_text="return charge(cart_total)")).to_be_visible()
    local = stack.locator(".stack-var", has=page.locator(".stack-var-name", has_text="basket_marker"))
    expect(local.locator(".stack-var-value")).to_have_text(f"'{marker}'")
    contexts = page.locator("#issue-contexts")
    expect(contexts.locator(".context-table", has_text="Browser")).to_be_visible()
    browser_name = contexts.locator("tr", has=page.locator(".context-key", has_text="name")).first
    expect(browser_name.locator(".context-value")).to_have_text("Firefox")

    page.click("#issue-trace-link")
    expect(page.locator("#trace-id")).to_have_text(trace_id, timeout=WAIT_MS)
    expect(page.locator("#waterfall")).to_contain_text("POST /api/checkout")
    expect(page.locator("#trace-errors")).to_contain_text(f"{kind}: card declined for 42")
    expect(page.locator("#trace-logs")).to_contain_text(f"checkout started {marker}")

    page.goto(f"{app_server.url}/logs")
    line = page.locator(".log-row", has_text=f"checkout started {marker}")
    expect(line).to_be_visible(timeout=WAIT_MS)
    expect(line.locator(".log-issue-link")).to_have_attribute("href", f"/issue?id={issue_id}")
    line.locator(".log-trace-link").click()
    expect(page.locator("#trace-id")).to_have_text(trace_id, timeout=WAIT_MS)
    expect(page.locator("#trace-errors")).to_contain_text(f"{kind}: card declined for 42")


def test_an_empty_search_says_what_matched_nothing(app_server: AppServer, page: Page) -> None:
    query = f"customer_tier:gold{uuid.uuid4().hex[:6]}"
    page.goto(f"{app_server.url}/issues?query={query}")
    expect(page.locator("#issues-empty")).to_contain_text(f"No issues match {query}.", timeout=WAIT_MS)
    expect(page.locator("#issues-empty code")).to_have_text(query)


def test_browsing_the_console_adds_no_transaction_of_its_refresh_loop(app_server: AppServer, page: Page) -> None:
    url = app_server.env["DATABASE_URL"]
    events = "select count(*) from inbox_transaction where op = 'reflex.event' and name not like '%.watch'"
    loops = "select count(*) from inbox_transaction where name like '%.watch'"
    pages_before = read_value(url, events)
    for path, title in (("/issues", "Issues"), ("/traces", "Traces"), ("/logs", "Logs")):
        page.goto(app_server.url + path)  # each a live page: its refresh loop runs while it is open
        expect(page.locator("#page-title")).to_have_text(title, timeout=WAIT_MS)
        page.wait_for_timeout(5_000)
    page.goto(app_server.url + "/")  # the last loop ends within a refresh once its page is left
    deadline = time.monotonic() + 20
    while read_value(url, events) == pages_before and time.monotonic() < deadline:
        page.wait_for_timeout(500)
    assert read_value(url, events) > pages_before  # the page views were traced
    page.wait_for_timeout(4_000)  # a refresh loop's transaction, if any, would have been stored by now
    assert read_value(url, loops) == 0


# Another test session's app of this project folder, as `app_server` starts one (a second pytest beside this one).
OTHER_SESSION = """
import signal
import sys
from pathlib import Path
from tests.e2e.app_server import AppServer
server = AppServer(log_path=Path(sys.argv[1]), env={"DATABASE_URL": "sqlite:///" + sys.argv[2], "SENTRY_DSN": ""})
def stop(*_):
    server.stop()  # the `reflex run` it started, if it did (a process group of its own)
    sys.exit(1)
signal.signal(signal.SIGTERM, stop)
server.start()
"""


def test_another_session_in_this_folder_waits_and_the_issue_page_still_fills(
    app_server: AppServer, page: Page, tmp_path: Path
) -> None:
    """Issue 36, item 8: with another test session beside it, /issue?id=N sometimes showed no link at all.
    That session's `reflex run` deleted .web/build (this app answered 404) and exported a build whose
    websocket names its own port (this app's pages connected there: refused, or another database)."""
    event_id, _ = report(app_server, tmp_path, "elsewhere", f"Declined{uuid.uuid4().hex[:6]}")
    issue_id = inbox_event(app_server, event_id)["issue_id"]
    other_log, said = tmp_path / "other-app.log", tmp_path / "other-session.txt"
    with said.open("wb") as output:
        other = subprocess.Popen([sys.executable, "-c", OTHER_SESSION, str(other_log), str(tmp_path / "other.db")],
                                 cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while "waiting for the test session" not in said.read_text() and not other_log.exists():
            assert other.poll() is None and time.monotonic() < deadline, said.read_text()
            page.wait_for_timeout(100)
        assert not other_log.exists(), "another session ran `reflex run` in the folder whose build this session serves"
        page.goto(f"{app_server.url}/issue?id={issue_id}")
        expect(page.locator("#issue-count")).to_have_text("1 event", timeout=WAIT_MS)
        assert other.poll() is None  # still waiting
    finally:
        stop_group(other)
