"""The dev overlay's browser UI (plugin/src/reflex_lookout/js/dev_overlay.js) in Chromium, against a
backend the test plays: a loopback HTTP server of its own serves a page that mounts the overlay
(bundled by the pinned esbuild with `source-map-js` from the app's .web/node_modules), a route
module with a real inline source map (esbuild's transform of dev_overlay_fixture/_index.jsx, as Vite
serves one) and the overlay's JSON API (/dev/events, /dev/clear) from data each test controls."""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.app_server import ROOT, AppServer

ESBUILD = ROOT / ".tools" / "node_modules" / ".bin" / "esbuild"
NODE_MODULES = ROOT / ".web" / "node_modules"
OVERLAY_JS = ROOT / "plugin" / "src" / "reflex_lookout" / "js" / "dev_overlay.js"
FIXTURE = Path(__file__).parent / "dev_overlay_fixture" / "_index.jsx"

APP_ROOT = "/home/dev/other_app"  # the answer's `root`
EDITOR = "vscode://file{path}:{line}:{column}"
PAGELOAD_TRACE = "0af7651916cd43dd8448eb211c80319c"
EVENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TAB_TRACES = [PAGELOAD_TRACE, EVENT_TRACE]
HOSTILE = '<img src=x onerror="window.__pwned=1">'
T0 = 1790000000.0
PAGE_HTML = """<!doctype html><html><head><meta charset="utf-8"><title>Other app</title></head>
<body><div id="root"><button id="fail">Fail</button></div>
<script type="module">
import { mount } from "/overlay.js";
mount({ eventsUrl: "/dev/events", clearUrl: "/dev/clear", traces: () => TAB_TRACES });
</script></body></html>
""".replace("TAB_TRACES", json.dumps(TAB_TRACES))


@dataclass
class Built:
    bundle: str  # dev_overlay.js bundled with source-map-js
    route: str  # the fixture as Vite would serve it: transformed, with an inline source map
    thrown_at: tuple[int, int]  # line and column (1-based) of `new Error(` in `route`
    original_line: int  # ...and in the fixture
    original_column: int
    original_text: str


def esbuild(*args: str, stdin: str | None = None) -> str:
    done = subprocess.run([str(ESBUILD), *args, "--log-level=warning"], input=stdin, capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "NODE_PATH": str(NODE_MODULES)}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def position_of(lines: list[str], needle: str) -> tuple[int, int]:
    [line] = [number for number, text in enumerate(lines, 1) if needle in text]
    return line, lines[line - 1].index(needle) + 1


@pytest.fixture(scope="module")
def built(app_server: AppServer) -> Built:
    """The overlay bundled with the source-map-js of the app's .web (there once the session's app is built)."""
    if not ESBUILD.exists():
        pytest.skip(f"{ESBUILD} missing (`make test-deps` installs the pinned tools)")
    assert (NODE_MODULES / "source-map-js").is_dir(), f"{NODE_MODULES / 'source-map-js'} missing after the app's build"
    bundle = esbuild(str(OVERLAY_JS), "--bundle", "--format=esm")
    # As Vite 8 names it: the map's source relative to the module, with the module URL's query.
    route = esbuild("--loader=jsx", "--format=esm", "--sourcemap=inline", "--sourcefile=_index.jsx?t=1",
                    stdin=FIXTURE.read_text())
    original = FIXTURE.read_text().splitlines()
    original_line, original_column = position_of(original, "new Error(")
    thrown_at = position_of(route.splitlines(), "new Error(")
    assert thrown_at[0] != original_line, "the transform must move the throw, or mapping proves nothing"
    return Built(bundle, route, thrown_at, original_line, original_column, original[original_line - 1])


@dataclass
class Backend:
    """The overlay's API as the test sets it: issues changed after `after`, and the traces they name."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    instance: str = "first"
    seq: int = 0
    issues: dict[str, dict] = field(default_factory=dict)
    traces: dict[str, dict] = field(default_factory=dict)
    pages: dict[str, dict] = field(default_factory=dict)
    editor: str = EDITOR
    junk: list[Any] = field(default_factory=list)  # malformed issues, in every answer
    replay: list[dict] = field(default_factory=list)  # old issues sent again, in every answer
    failure: str | None = None  # "500" or "garbage"
    requests: list[dict[str, str]] = field(default_factory=list)
    cleared: list[Any] = field(default_factory=list)

    def put(self, *issues: dict) -> None:
        """Issues (new, or changed: replaced by key) in the next answer, one seq each."""
        with self.lock:
            for issue in issues:
                self.seq += 1
                self.issues[issue["key"]] = {**issue, "seq": self.seq}

    def restart(self, instance: str) -> None:
        with self.lock:
            self.instance, self.seq, self.issues, self.traces = instance, 0, {}, {}

    def answer(self, traces: str, after: str) -> dict | None:
        with self.lock:
            self.requests.append({"traces": traces, "after": after})
            if self.failure:
                return None
            changed = [issue for issue in self.issues.values() if issue["seq"] > int(after)]
            named = {issue["trace_id"] for issue in changed} & set(self.traces)
            return {"instance": self.instance, "seq": self.seq, "root": APP_ROOT, "editor": self.editor,
                    "pages": self.pages, "issues": [*changed, *self.replay, *self.junk],
                    "traces": {trace_id: self.traces[trace_id] for trace_id in named}}

    def clear(self, body: Any) -> None:
        with self.lock:
            self.cleared.append(body)
            for key in body.get("keys", []):
                self.issues.pop(key, None)


class Handler(http.server.BaseHTTPRequestHandler):
    def __init__(self, *args: Any, site: Site, **kwargs: Any) -> None:
        self.site = site
        super().__init__(*args, **kwargs)

    def log_message(self, *args: Any) -> None:
        pass

    def reply(self, status: int, body: str, content_type: str) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/":
            self.reply(200, PAGE_HTML, "text/html; charset=utf-8")
        elif url.path == "/overlay.js":
            self.reply(200, self.site.built.bundle, "text/javascript")
        elif url.path == "/app/routes/_index.jsx":
            self.reply(200, self.site.built.route, "text/javascript")
        elif url.path == "/dev/events":
            query = parse_qs(url.query, keep_blank_values=True)
            answer = self.site.backend.answer(query.get("traces", [""])[0], query.get("after", [""])[0])
            if answer is not None:
                self.reply(200, json.dumps(answer), "application/json")
            elif self.site.backend.failure == "garbage":
                self.reply(200, "<html>reloading</html>", "text/html")
            else:
                self.reply(500, "Internal Server Error", "text/plain")
        else:
            self.reply(404, "not found", "text/plain")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if urlsplit(self.path).path != "/dev/clear":
            return self.reply(404, "not found", "text/plain")
        self.site.backend.clear(json.loads(body))
        self.reply(200, "{}", "application/json")


@dataclass
class Site:
    built: Built
    backend: Backend = field(default_factory=Backend)
    url: str = ""


@pytest.fixture(scope="module")
def site(built: Built) -> Iterator[Site]:
    served = Site(built)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, site=served))
    server.daemon_threads = True
    served.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def browser_issue(site: Site) -> dict:
    """An error thrown in OtherAppThrower: the frame points into the transformed module (its ?t= as Vite's)."""
    line, column = site.built.thrown_at
    module = f"{site.url}/app/routes/_index.jsx?t=1"
    react = f"{site.url}/node_modules/.vite/deps/react-dom_client.js?v=1"  # 404 here: stays as sent
    return {
        "key": "browser-1", "count": 1, "first": T0 + 2, "last": T0 + 2, "source": "browser", "type": "Error",
        "value": "Other app: the thrower threw", "trace_id": PAGELOAD_TRACE, "event_id": "1" * 32,
        "transaction": "/", "url": f"{site.url}/", "python_page": None, "element": "",
        "frames": [
            {"filename": react, "abs_path": react, "function": "renderWithHooks", "lineno": 100, "colno": 5, "in_app": False},
            {"filename": module, "abs_path": module, "function": "OtherAppThrower", "lineno": line, "colno": column,
             "in_app": True},
        ],
    }


def server_issue() -> dict:
    return {
        "key": "server-1", "count": 1, "first": T0 + 1, "last": T0 + 1, "source": "server", "type": "RuntimeError",
        "value": HOSTILE, "trace_id": EVENT_TRACE, "event_id": "2" * 32, "transaction": "State.fail",
        "url": "http://localhost:3000/", "element": "button#fail",
        "python_page": {"module": "other_app.other_app", "function": "index", "file": "other_app/other_app.py", "line": 82},
        "frames": [
            None, "junk",  # malformed frames are skipped
            {"filename": "reflex/state.py", "abs_path": "/usr/lib/python3/site-packages/reflex/state.py",
             "module": "reflex.state", "function": "_process_event", "lineno": 1800,
             "context_line": "        events = fn(**payload)", "in_app": False},
            {"filename": "other_app/other_app.py", "abs_path": f"{APP_ROOT}/other_app/other_app.py",
             "module": "other_app.other_app", "function": "fail", "lineno": 41, "pre_context": ["    def fail(self):"],
             "context_line": f"        raise RuntimeError({HOSTILE!r})", "post_context": [""], "in_app": True},
        ],
    }


EVENT_TRACE_DATA = {
    "transactions": [{
        "name": "State.fail", "op": "reflex.event", "source": "server", "start": T0 + 1.0, "end": T0 + 1.2,
        "spans": [{"span_id": "b" * 16, "parent_span_id": "a" * 16, "op": "db.sql.query",
                   "description": "SELECT id FROM orders", "start": T0 + 1.05, "end": T0 + 1.15},
                  {"span_id": "c" * 16, "op": "db.sql.query"}],  # malformed: no times
    }, "junk"],
    "logs": [{"timestamp": T0 + 1.01, "level": "info", "body": "charging the order", "source": "server"},
             {"timestamp": T0 + 1.16, "level": "error", "body": HOSTILE, "source": "server"},
             {"level": "info"}],  # malformed: no timestamp
}
JUNK_ISSUES = [None, "text", {"key": "no-count", "seq": 1}, {"key": 7, "count": 1, "seq": 1},
               {"key": "count-as-text", "count": "3", "seq": 1}]


@pytest.fixture
def backend(site: Site) -> Backend:
    """This test's backend: a browser error and a server error (with its event's trace), and junk."""
    site.backend = Backend(junk=JUNK_ISSUES, traces={EVENT_TRACE: EVENT_TRACE_DATA, "not-a-trace-id": {}})
    site.backend.put(server_issue(), browser_issue(site))
    return site.backend


@pytest.fixture
def overlay(page: Page, site: Site, backend: Backend) -> Page:
    page.goto(f"{site.url}/")
    page.wait_for_function("() => window.__lookoutDevOverlay !== undefined")
    return page


def wait_until(page: Page, condition: Callable[[], bool], what: str, timeout: float = 5) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        page.wait_for_timeout(50)


def open_panel(page: Page, articles: int = 2) -> None:
    expect(page.locator("#lookout-dev-panel")).to_be_hidden()
    page.locator("#lookout-dev-badge").click()
    expect(page.locator("#lookout-dev-panel")).to_be_visible()
    expect(page.locator("article.lookout-issue")).to_have_count(articles)


def article(page: Page, key: str):  # noqa: ANN201 (a Locator)
    return page.locator(f'article.lookout-issue[data-key="{key}"]')


def test_the_badge_counts_the_tabs_errors_and_polls_with_its_traces(overlay: Page, backend: Backend) -> None:
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("2 errors", timeout=2000)
    assert overlay.evaluate("document.querySelectorAll('lookout-dev-overlay').length") == 1
    assert overlay.evaluate("document.getElementById('lookout-dev-overlay').shadowRoot !== null")
    wait_until(overlay, lambda: len(backend.requests) >= 3, "three polls")
    assert {r["traces"] for r in backend.requests} == {",".join(TAB_TRACES)}
    assert backend.requests[0]["after"] == "0"
    assert backend.requests[-1]["after"] == str(backend.seq)
    open_panel(overlay)


def test_a_browser_error_shows_its_mapped_frame_python_page_and_component(overlay: Page, built: Built) -> None:
    open_panel(overlay)
    issue = article(overlay, "browser-1")
    expect(issue.locator(".lookout-title")).to_have_text("Error: Other app: the thrower threw")
    expect(issue.locator(".lookout-source")).to_have_text("browser")
    frames = issue.locator(".lookout-frame")
    expect(frames).to_have_count(2)
    mapped = frames.first  # newest first: the raising frame
    where = f".web/app/routes/_index.jsx:{built.original_line}:{built.original_column}"
    expect(mapped).to_have_class("lookout-frame lookout-mapped lookout-in-app")
    expect(mapped.locator(".lookout-where")).to_have_text(f"OtherAppThrower — {where}")
    expect(mapped.locator(".lookout-current")).to_have_text(built.original_text)
    expect(mapped.locator("a.lookout-open")).to_have_attribute(
        "href", f"vscode://file{APP_ROOT}/.web/app/routes/_index.jsx:{built.original_line}:{built.original_column}")
    # The marker in the map's sourcesContent names the page; the enclosing function is the component.
    expect(issue.locator(".lookout-page")).to_have_text("Page: other_app/other_app.py:82 (index)")
    expect(issue.locator(".lookout-page a")).to_have_attribute("href", f"vscode://file{APP_ROOT}/other_app/other_app.py:82:1")
    expect(issue.locator(".lookout-component")).to_have_text("Component: OtherAppThrower")
    # React's module is not there (404): its frame stays as sent, folded, with no link.
    library = frames.nth(1)
    expect(library.locator(".lookout-where")).to_contain_text("renderWithHooks — http://127.0.0.1:")
    assert library.evaluate("(frame) => frame.open") is False
    expect(library.locator("a.lookout-open")).to_have_count(0)
    expect(issue.locator(".lookout-trace")).to_have_text("No trace data.")


def test_a_server_error_shows_its_frames_links_waterfall_and_logs_as_text(overlay: Page) -> None:
    open_panel(overlay)
    issue = article(overlay, "server-1")
    expect(issue.locator(".lookout-title")).to_have_text(f"RuntimeError: {HOSTILE}")
    expect(issue.locator(".lookout-count")).to_have_count(0)
    expect(issue.locator(".lookout-transaction")).to_have_text("State.fail")
    expect(issue.locator(".lookout-element")).to_have_text("Element: button#fail")
    expect(issue.locator(".lookout-page")).to_have_text("Page: other_app/other_app.py:82 (index)")
    frames = issue.locator(".lookout-frame")
    expect(frames).to_have_count(2)
    expect(frames.first.locator(".lookout-where")).to_have_text("fail — other_app/other_app.py:41")
    expect(frames.first.locator("a.lookout-open")).to_have_attribute("href", f"vscode://file{APP_ROOT}/other_app/other_app.py:41:1")
    expect(frames.first.locator(".lookout-current")).to_have_text(f"        raise RuntimeError({HOSTILE!r})")
    assert frames.first.evaluate("(frame) => frame.open") is True
    assert frames.nth(1).evaluate("(frame) => frame.open") is False  # not in app: folded
    expect(frames.nth(1).locator("a.lookout-open")).to_have_attribute(
        "href", "vscode://file/usr/lib/python3/site-packages/reflex/state.py:1800:1")

    rows = issue.locator(".lookout-span")
    expect(rows).to_have_count(2)
    expect(rows.first).to_have_text("reflex.event State.fail 200 ms")
    expect(rows.nth(1)).to_have_text("db.sql.query SELECT id FROM orders 100 ms")
    [transaction, span] = rows.locator(".lookout-bar").evaluate_all(
        "(bars) => bars.map((bar) => [parseFloat(bar.style.left), parseFloat(bar.style.width)])")
    assert transaction == pytest.approx([0, 100], abs=0.01)
    assert span == pytest.approx([25, 50], abs=0.01)
    assert transaction[0] <= span[0] and span[0] + span[1] <= transaction[0] + transaction[1] + 1e-9

    logs = issue.locator(".lookout-log")
    expect(logs).to_have_count(2)
    expect(logs.first).to_contain_text("info charging the order")
    expect(logs.nth(1).locator(".lookout-body")).to_have_text(HOSTILE)
    expect(logs.nth(1).locator(".lookout-level")).to_have_text("error")
    # Data stays text: no element was made of it, nothing ran.
    assert overlay.evaluate("document.getElementById('lookout-dev-overlay').shadowRoot.querySelectorAll('img').length") == 0
    assert overlay.evaluate("window.__pwned") is None


def test_unchanged_issues_keep_their_elements_across_polls(overlay: Page, backend: Backend) -> None:
    open_panel(overlay)
    article(overlay, "server-1").evaluate("(node) => { node.__lookoutTest = 'same'; }")
    polls = len(backend.requests)
    wait_until(overlay, lambda: len(backend.requests) >= polls + 3, "three more polls")
    assert article(overlay, "server-1").evaluate("(node) => node.__lookoutTest") == "same"
    backend.put({**server_issue(), "count": 3, "last": T0 + 5})
    expect(article(overlay, "server-1").locator(".lookout-count")).to_have_text("×3")
    assert article(overlay, "server-1").evaluate("(node) => node.__lookoutTest") is None  # changed: built again
    expect(overlay.locator("article.lookout-issue").first).to_have_attribute("data-key", "server-1")  # newest first
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("4 errors")


def test_clearing_posts_the_keys_and_only_a_newer_occurrence_brings_one_back(overlay: Page, backend: Backend) -> None:
    open_panel(overlay)
    before = dict(backend.issues["server-1"])
    article(overlay, "server-1").locator("button.lookout-clear").click()
    expect(overlay.locator("article.lookout-issue")).to_have_count(1)
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("1 error")
    wait_until(overlay, lambda: backend.cleared == [{"keys": ["server-1"]}], "the clear request")
    # An answer sent before the clear arrives after it: the same occurrence stays cleared.
    backend.replay = [before]
    polls = len(backend.requests)
    wait_until(overlay, lambda: len(backend.requests) >= polls + 2, "two polls")
    expect(overlay.locator("article.lookout-issue")).to_have_count(1)
    backend.replay = []
    backend.put({**server_issue(), "count": 2, "last": T0 + 5})
    expect(article(overlay, "server-1").locator(".lookout-count")).to_have_text("×2")
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("3 errors")

    overlay.locator("#lookout-dev-clear-all").click()
    expect(overlay.locator("article.lookout-issue")).to_have_count(0)
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("0 errors")
    expect(overlay.locator("#lookout-dev-badge")).to_have_class("lookout-muted")
    wait_until(overlay, lambda: len(backend.cleared) == 2, "the clear-all request")
    assert sorted(backend.cleared[1]["keys"]) == ["browser-1", "server-1"]


def test_a_restarted_backend_is_asked_from_zero_and_the_list_stays(overlay: Page, backend: Backend) -> None:
    open_panel(overlay)
    wait_until(overlay, lambda: backend.requests[-1]["after"] == "2", "a poll after seq 2")
    polls = len(backend.requests)
    backend.restart("second")
    backend.put({**server_issue(), "key": "server-2", "value": "after the restart", "last": T0 + 9})  # seq 1
    wait_until(overlay, lambda: any(r["after"] == "0" for r in backend.requests[polls:]), "a poll from after=0")
    expect(article(overlay, "server-2")).to_have_count(1)  # seq 1 < 2: only asked for from 0
    expect(overlay.locator("article.lookout-issue")).to_have_count(3)
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("3 errors")


def test_a_reloaded_page_keeps_what_the_tab_showed_and_what_it_cleared(overlay: Page, backend: Backend) -> None:
    """An edit can reload the backend (its memory empty) and the page: the tab still lists what failed before."""
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("2 errors")
    backend.restart("after-the-edit")
    overlay.reload()
    overlay.wait_for_function("() => window.__lookoutDevOverlay !== undefined")
    open_panel(overlay)
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("2 errors")
    other_tab = overlay.context.new_page()  # another tab: its own session, whose errors are none yet
    other_tab.goto(overlay.url)
    other_tab.wait_for_function("() => window.__lookoutDevOverlay !== undefined")
    other_tab.wait_for_timeout(1500)  # two polls
    expect(other_tab.locator("#lookout-dev-badge")).to_have_text("0 errors")
    overlay.locator("#lookout-dev-clear-all").click()
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("0 errors")
    overlay.reload()
    overlay.wait_for_function("() => window.__lookoutDevOverlay !== undefined")
    overlay.wait_for_timeout(1500)  # two polls
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("0 errors")


def test_a_failing_backend_shows_reconnecting_until_it_answers_again(overlay: Page, backend: Backend) -> None:
    open_panel(overlay)
    status = overlay.locator(".lookout-status")
    expect(status).to_have_text("")
    for failure in ("500", "garbage"):
        backend.failure = failure
        expect(status).to_have_text("reconnecting…")
        expect(overlay.locator("article.lookout-issue")).to_have_count(2)
        backend.failure = None
        expect(status).to_have_text("")
    backend.put({**server_issue(), "count": 2, "last": T0 + 5})
    expect(article(overlay, "server-1").locator(".lookout-count")).to_have_text("×2")


def test_a_flood_keeps_the_newest_hundred_and_the_page_answers(overlay: Page, backend: Backend) -> None:
    open_panel(overlay)
    backend.put(*({**server_issue(), "key": f"flood-{i}", "value": f"flood {i}", "last": T0 + 10 + i} for i in range(1000)))
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("100 errors")
    expect(overlay.locator("article.lookout-issue")).to_have_count(100)
    expect(article(overlay, "flood-999")).to_have_count(1)
    expect(article(overlay, "flood-900")).to_have_count(1)
    expect(article(overlay, "flood-899")).to_have_count(0)
    expect(article(overlay, "server-1")).to_have_count(0)
    expect(overlay.locator("article.lookout-issue").first).to_have_attribute("data-key", "flood-999")
    assert overlay.evaluate("1 + 1") == 2


def test_mounting_again_reuses_the_overlay_and_a_removed_one_comes_back(overlay: Page, site: Site) -> None:
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("2 errors")
    overlay.evaluate("""async () => {
        window.__lookoutFirst = window.__lookoutDevOverlay;
        const { mount } = await import("/overlay.js?again");
        mount({ eventsUrl: "/dev/events", clearUrl: "/dev/clear", traces: () => [] });
    }""")
    assert overlay.evaluate("window.__lookoutFirst === window.__lookoutDevOverlay")
    assert overlay.evaluate("document.querySelectorAll('lookout-dev-overlay').length") == 1
    wait_until(overlay, lambda: site.backend.requests[-1]["traces"] == "", "a poll with the new options")
    overlay.evaluate("document.getElementById('lookout-dev-overlay').remove()")  # as a React re-render may
    overlay.wait_for_function("document.querySelectorAll('lookout-dev-overlay').length === 1", timeout=2000)
    expect(overlay.locator("#lookout-dev-badge")).to_have_text("2 errors")


def test_the_answers_pages_name_a_browser_errors_page_before_its_marker(
    page: Page, site: Site, backend: Backend
) -> None:
    backend.pages = {".web/app/routes/_index.jsx": {"module": "other_app.pages", "function": "home",
                                                   "file": "other_app/pages.py", "line": 12}}
    page.goto(f"{site.url}/")
    open_panel(page)
    expect(article(page, "browser-1").locator(".lookout-page")).to_have_text("Page: other_app/pages.py:12 (home)")


def test_an_unsafe_editor_template_gives_no_links(page: Page, site: Site, backend: Backend) -> None:
    backend.editor = "javascript:alert(1)//{path}"
    page.goto(f"{site.url}/")
    open_panel(page)
    expect(page.locator(".lookout-frame.lookout-mapped")).to_have_count(1)
    expect(page.locator("a[href]")).to_have_count(0)
    expect(article(page, "server-1").locator(".lookout-where").first).to_have_text("fail — other_app/other_app.py:41")
