"""What several browser tests share: where logs are kept, the console user from elsewhere, the
project's git state, opening a page and waiting for its SDK, an event as the inbox keeps it, and a
copy of the project served by an app of its own."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from app.console.accounts import hash_password
from tests.e2e.app_server import ROOT, AppServer

LOG_DIR = Path(__file__).parent / "logs"
# A console user for the tests that come from another address (tests/e2e/test_console.py).
VIEWER, VIEWER_PASSWORD = "e2e-viewer", "e2e-viewer-password"


def submit_sign_in(page: Page, password: str = VIEWER_PASSWORD) -> None:
    """Send the sign-in form as VIEWER, with `password`."""
    page.fill("#sign-in-name", VIEWER)
    page.fill("#sign-in-password", password)
    page.click("#sign-in-submit")


def sign_in_from_refusal(page: Page) -> None:
    """From a console page's refusal, sign in as VIEWER and wait until the console says so."""
    page.click("#console-sign-in")
    submit_sign_in(page)
    expect(page.locator("#console-viewer")).to_contain_text(VIEWER, timeout=15_000)


def tree_state() -> list[str]:
    """`git status --porcelain` of the project, each line with the content hash of the file it names:
    a build that rewrites a file that was already modified shows too."""
    listed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout.splitlines()
    files = [line for line in listed if (ROOT / line[3:]).is_file()]
    hashes = subprocess.run(["git", "hash-object", "--stdin-paths"], cwd=ROOT, input="\n".join(line[3:] for line in files),
                            check=True, capture_output=True, text=True).stdout.split() if files else []
    return sorted({*listed, *(f"{line} {digest}" for line, digest in zip(files, hashes, strict=True))})


def open_page(page: Page, app_server: AppServer, path: str = "/") -> None:
    """Open `path` and wait until the SDK runs, the page rendered and tracing (loaded when the
    browser is first idle) has arrived, so that navigations from here on are traced."""
    page.goto(app_server.url + path)
    page.wait_for_function("() => window.lookout?.tracing === true && !!document.querySelector('#page-title')")


TRY_MODULE = ".web/app/routes/[try]._index.jsx"  # the route module Reflex generates for app/pages/try_errors.py's page


def _copy_project(destination: Path, front_end: bool = True) -> None:
    """The project's files (tracked and new, not ignored) and, with `front_end`, its installed front end (.web/
    of the first build: that build must be done), in another directory."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    (destination / ".tools").symlink_to(ROOT / ".tools")
    if not front_end:
        return
    web = ROOT / ".web"
    # Not the first build's output: the second makes its own.
    shutil.copytree(web, destination / ".web", symlinks=True,
                    ignore=lambda folder, _: ["build", "lookout-sourcemaps"] if Path(folder) == web else [])


def serving(request: pytest.FixtureRequest, server: AppServer) -> Iterator[AppServer]:
    """`server` started, for a fixture to `yield from`: stopped afterwards; its log kept only if it
    failed to start or a test of the run failed."""
    server.start()
    try:
        yield server
    finally:
        server.stop()
        if request.session.testsfailed:
            print(f"\napp log kept at {server.log_path}")
        else:
            server.log_path.unlink(missing_ok=True)


def inbox_event(app_server: AppServer, event_id: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        # Each read may take its time (in dev mode it goes through Vite's proxy, on a machine busy
        # with the other test processes): the deadline is the loop's, not httpx's 5 s default.
        answer = httpx.get(f"{app_server.url}/api/inbox/events/{event_id}", timeout=timeout)
        if answer.status_code == 200 or time.monotonic() > deadline:
            assert answer.status_code == 200, f"{answer.text}\nwhat the app logged about it:\n{_log_about(app_server, event_id)}"
            return answer.json()
        time.sleep(0.2)


def _log_about(app_server: AppServer, event_id: str) -> str:
    """The app log's lines on the outbox, the tunnel and the feeder, or naming the event (for a failure's message)."""
    if not app_server.log_path.exists():
        return "(no log)"
    words = (event_id, "outbox", "tunnel", "feeder", "inbox", "envelope")
    lines = app_server.log_path.read_text(errors="replace").splitlines()
    return "\n".join([line for line in lines if any(w in line for w in words)][-40:]) or "(nothing)"


def started_app(request: pytest.FixtureRequest, database: Path, name: str, root: Path = ROOT,
                env: dict[str, str] | None = None, backend_only: bool = False) -> Iterator[AppServer]:
    """The production app built in `root` (or its backend alone) and started with a database of its own
    (the tests never touch the developer's lookout.db) and `env` besides, for a fixture to `yield from`:
    stopped afterwards, its log (tests/e2e/logs/NAME-<time>.log) kept only when a test failed."""
    server = AppServer(
        log_path=LOG_DIR / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.log", root=root, backend_only=backend_only,
        # No raw envelope is deleted during the run (cap 5,000 by default; the hostile-client runs make
        # ~12,000): the home page's "kept" figure must not shrink between two readings of a test.
        # Nor an event: the hostile-client runs store tens of thousands of error events, and a test that
        # counts events before and after must not see retention's cut (10,000 per project by default).
        # Retention has tests of its own.
        env={"DATABASE_URL": f"sqlite:///{database}", "SENTRY_DSN": "", "LOOKOUT_INBOX_MAX_RAW_ENVELOPES": "1000000",
             "LOOKOUT_INBOX_MAX_EVENTS": "1000000",
             "LOOKOUT_CONSOLE_USERS": f"{VIEWER}:viewer:{hash_password(VIEWER_PASSWORD)}",
             # The alerts page's tests add webhooks on loopback (tests/e2e/test_alerts.py).
             "LOOKOUT_WEBHOOK_ALLOW": "127.0.0.1", **(env or {})},
    )
    server.tree_before = tree_state()
    yield from serving(request, server)
