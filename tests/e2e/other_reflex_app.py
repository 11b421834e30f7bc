"""Another Reflex app with `reflex-lookout` (issue #27): the plugin built as a wheel, a virtual environment
with reflex==0.10.1 and that wheel, a blank app made by `reflex init --template blank` with the one line in
its rxconfig.py and a page that fails three ways, that app served in prod or dev, a visit in Chromium
that records every request the browser made, and what a Lookout's project received.

Every step is timed (wall and CPU of this process and its children): `STEPS`, printed by the test module.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import sqlalchemy
from playwright.sync_api import Browser

from app.inbox.reading import InboxReader
from app.inbox.tables import EVENTS, FEEDBACK, LOGS, TRANSACTIONS
from tests.e2e.app_server import ROOT
from tests.services import free_port, stop_group

PLUGIN = ROOT / "plugin"
BUN = ROOT / ".tools" / "node_modules" / "bun" / "bin" / "bun.exe"
APP_NAME = "other_app"
# What the page's failures say: each is looked for in the Lookout by its text.
BROWSER_ERROR = "other app: a browser error on purpose"
HANDLER_ERROR = "other app: a handler error on purpose"
LOG_LINE = "other app: a log line on purpose"
FEEDBACK_TEXT = "other app: the button broke, said a user"  # sent with Sentry's feedback widget (prod run)
# The route module Reflex generates for the index page (the browser error's frames map to it).
INDEX_MODULE = ".web/app/routes/_index.jsx"
# The dev overlay (issue 39): its element and shadow root, as the plugin's js/dev_overlay.js makes them.
OVERLAY = "lookout-dev-overlay"
BADGE_TEXT = f"() => document.querySelector('{OVERLAY}')?.shadowRoot?.querySelector('#lookout-dev-badge')?.textContent ?? null"

# The other app's page: a button that runs a function compiled into the page's route module (not evaluated text,
# which has no source map) and throws from a timer, a button whose handler raises, one whose handler logs.
PAGE = f'''"""The page of an app that is not Lookout: it fails three ways."""

import logging

import reflex as rx

logger = logging.getLogger(__name__)


class Thrower(rx.Component):
    """Compiles `otherAppThrow` into the page's route module."""

    tag = "OtherAppThrower"

    def add_custom_code(self) -> list[str]:
        return [
            "function otherAppThrowLater() {{\\n"
            "  throw new Error({BROWSER_ERROR!r});\\n"
            "}}\\n"
            "if (typeof window !== 'undefined') window.otherAppThrow = () => {{ setTimeout(otherAppThrowLater, 0); }};\\n"
            "function OtherAppThrower() {{\\n"
            "  return null;\\n"
            "}}"
        ]


class State(rx.State):
    logged: int = 0

    @rx.event
    def fail(self):
        raise RuntimeError({HANDLER_ERROR!r})

    @rx.event
    def log(self):
        self.logged += 1
        logger.info({LOG_LINE!r} + " (%d)", self.logged)


def index() -> rx.Component:
    return rx.vstack(
        rx.heading("another app", id="title"),
        Thrower.create(),
        rx.button("throw in the browser", id="throw", on_click=rx.call_script("window.otherAppThrow()")),
        rx.button("fail in a handler", id="fail", on_click=State.fail),
        rx.button("log a line", id="log", on_click=State.log),
        rx.text(State.logged, id="logged"),
    )


app = rx.App()
app.add_page(index)
'''

# name → (wall s, CPU s of this process and all its descendants: `_cpu`)
STEPS: dict[str, tuple[float, float]] = {}


def _cpu() -> float:
    """CPU seconds of this process, its reaped children and every live descendant (the apps, the Lookout,
    Chromium; each with the children it reaped itself), so that a step's delta counts the servers' work too."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    parents: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        ticks[pid] = sum(int(value) for value in fields[11:15])  # utime, stime, cutime, cstime
    descendants, frontier = set(), {os.getpid()}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - descendants
        descendants |= frontier
    live = sum(ticks[pid] for pid in descendants) / os.sysconf("SC_CLK_TCK")
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + live


@contextmanager
def step(name: str) -> Iterator[None]:
    wall, cpu = time.monotonic(), _cpu()
    try:
        yield
    finally:
        STEPS[name] = (time.monotonic() - wall, _cpu() - cpu)
        print(f"\n[step] {name}: {STEPS[name][0]:.1f} s wall, {STEPS[name][1]:.1f} s CPU", flush=True)


def run(command: list[str | Path], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{command} exited with {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def build_wheel(work: Path) -> Path:
    """The plugin's wheel, built from a copy of plugin/ (a build leaves build/ and *.egg-info behind)."""
    source = work / "plugin"
    shutil.copytree(PLUGIN, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "tests", "__pycache__"))
    # Isolated: pip takes setuptools from the machine's package index (the project's setuptools 65.5 has no bdist_wheel).
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", source, "-w", work / "dist"], cwd=work)
    [wheel] = (work / "dist").glob("reflex_lookout-*.whl")
    return wheel


def make_venv(work: Path, wheel: Path) -> Path:
    """A virtual environment with reflex==0.10.1 and the wheel with its extra `sourcemaps` (sentry-cli), its
    dependencies from the package index."""
    venv = work / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=work)
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", "reflex==0.10.1", f"{wheel}[sourcemaps]"], cwd=work)
    return venv


def app_env(venv: Path, dsn: str) -> dict[str, str]:
    return {
        "PATH": f"{venv / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(venv),
        "REFLEX_BUN_PATH": str(BUN), "REFLEX_TELEMETRY_ENABLED": "false", "SENTRY_DSN": dsn,
        # Not the test process's: the app's own modules and nothing of Lookout's.
        "PYTHONPATH": "",
    }


ONE_LINE = "        reflex_lookout.Monitoring(),\n"


def make_app(root: Path, venv: Path) -> Path:
    """`reflex init --template blank` in `root`, the one line in rxconfig.py (and its import), the page."""
    root.mkdir()
    run([venv / "bin" / "reflex", "init", "--template", "blank"], cwd=root, env=app_env(venv, ""), timeout=120)
    config = root / "rxconfig.py"
    text = config.read_text()
    end = "    ]\n)"  # the end of the template's plugins=[...]: the one line goes last
    assert text.count(end) == 1, text
    text = text.replace("import reflex as rx\n", "import reflex as rx\nimport reflex_lookout\n", 1)
    text = text.replace(end, ONE_LINE + end, 1)
    config.write_text(text)
    (root / APP_NAME / f"{APP_NAME}.py").write_text(PAGE)
    return root


class OtherAppServer:
    """The other app under `reflex run` from its venv: prod (one port) or dev (Vite and the backend)."""

    def __init__(self, root: Path, venv: Path, env: dict[str, str], log_path: Path, dev: bool) -> None:
        """`env`: besides the machine's (app_env's, and the source-map upload's variables)."""
        self.root, self.venv, self.env, self.log_path, self.dev = root, venv, env, log_path, dev
        self.port = free_port()
        self.backend_port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 600) -> None:
        command = [str(self.venv / "bin" / "reflex"), "run", "--env", "dev" if self.dev else "prod", "--loglevel", "info",
                   "--backend-host", "127.0.0.1", "--frontend-port", str(self.port)]
        if self.dev:
            command += ["--backend-port", str(self.backend_port)]
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(command, cwd=self.root, env={**os.environ, **self.env},
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the other app exited with {self.process.returncode}:\n{self.log_tail()}")
            if self._answers():
                return
            time.sleep(0.5)
        raise RuntimeError(f"the other app did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def _answers(self) -> bool:
        backend = f"http://127.0.0.1:{self.backend_port}" if self.dev else self.url
        try:
            return (httpx.get(f"{backend}/_health", timeout=2).status_code == 200
                    and httpx.get(f"{self.url}/", timeout=10).status_code == 200)
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            stop_group(process)

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:]) if self.log_path.exists() else ""


@dataclass
class Visit:
    """What the browser did on one visit of the other app."""
    app_url: str
    requests: list[tuple[str, str]] = field(default_factory=list)  # (method, url) of every request, workers' too
    console: list[str] = field(default_factory=list)
    toast: bool = False
    overlay: str | None = None  # the dev overlay's badge at the end (None: no overlay in the page)
    feedback_widget: bool = False  # Sentry's feedback widget was in the page (and a feedback was sent with it)


def visit(browser: Browser, url: str) -> Visit:
    """Open the page, wait until the SDK and its tracing run, click each button, flush the SDK."""
    seen = Visit(url)
    context = browser.new_context()
    try:
        context.on("request", lambda request: seen.requests.append((request.method, request.url)))
        page = context.new_page()
        page.on("console", lambda message: seen.console.append(f"{message.type}: {message.text[:300]}"))
        page.goto(url + "/")
        page.wait_for_function("() => window.__reflex !== undefined && !!document.querySelector('#title')", timeout=60_000)
        page.wait_for_function("() => window.lookout?.tracing === true", timeout=30_000)
        page.click("#throw")
        page.wait_for_timeout(1000)
        page.click("#fail")
        page.wait_for_timeout(1000)
        page.click("#log")
        page.wait_for_function("() => document.querySelector('#logged')?.textContent === '1'", timeout=30_000)
        page.wait_for_timeout(1000)
        seen.feedback_widget = page.locator("#sentry-feedback").count() > 0
        if seen.feedback_widget:  # a user tells what happened, after the browser error
            page.get_by_role("button", name="Report a Bug").click()
            page.locator("#sentry-feedback input[name=name]").fill("Ada")
            page.locator("#sentry-feedback input[name=email]").fill("ada@example.com")
            page.locator("#sentry-feedback textarea[name=message]").fill(FEEDBACK_TEXT)
            page.get_by_role("button", name="Send Bug Report").click()
            page.wait_for_timeout(1000)
        seen.toast = page.evaluate("() => document.body.innerText.includes('Something went wrong')")
        if page.evaluate(f"() => !!document.querySelector('{OVERLAY}')"):  # dev: wait until it counted both errors
            page.wait_for_function(f"() => ({BADGE_TEXT})() === '2 errors'", timeout=20_000)
        seen.overlay = page.evaluate(BADGE_TEXT)
        page.evaluate("() => window.lookout?.flush?.(5000)")
        page.wait_for_timeout(1000)
    finally:
        context.close()
    return seen


class Received:
    """What a Lookout project holds: its error events, transactions and log lines (read from its database)."""

    def __init__(self, engine: sqlalchemy.Engine, project_id: int) -> None:
        self.engine, self.project_id = engine, project_id

    def error(self, text: str, timeout: float = 45) -> dict | None:
        """The first error event whose title holds `text`, as the SDK sent it (with the inbox's symbolication)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.engine.connect() as connection:
                found = connection.execute(sqlalchemy.select(EVENTS.c.event_id).where(
                    EVENTS.c.project_id == self.project_id, EVENTS.c.title.contains(text)).order_by(EVENTS.c.id)).first()
            if found is not None:
                stored = InboxReader(self.engine).event(found[0])
                if stored is not None:
                    return stored["event"]
            if time.monotonic() > deadline:
                return None
            time.sleep(0.3)

    def transactions(self, op: str, timeout: float = 45) -> list[dict]:
        """The project's transactions of `op` (once there is one, or none after `timeout`)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.engine.connect() as connection:
                rows = [dict(row) for row in connection.execute(sqlalchemy.select(
                    TRANSACTIONS.c.trace_id, TRANSACTIONS.c.op, TRANSACTIONS.c.name, TRANSACTIONS.c.platform,
                ).where(TRANSACTIONS.c.project_id == self.project_id, TRANSACTIONS.c.op == op)).mappings()]
            if rows or time.monotonic() > deadline:
                return rows
            time.sleep(0.3)

    def feedback(self, text: str, timeout: float = 45) -> dict | None:
        """The feedback whose message holds `text`, as stored (the event it names, the reporter)."""
        deadline = time.monotonic() + timeout
        while True:
            with self.engine.connect() as connection:
                found = connection.execute(sqlalchemy.select(FEEDBACK).where(
                    FEEDBACK.c.project_id == self.project_id, FEEDBACK.c.message.contains(text))).mappings().first()
            if found is not None or time.monotonic() > deadline:
                return dict(found) if found is not None else None
            time.sleep(0.3)

    def issue_of(self, event_id: str) -> int | None:
        with self.engine.connect() as connection:
            return connection.execute(sqlalchemy.select(EVENTS.c.issue_id).where(EVENTS.c.event_id == event_id)).scalar()

    def log_lines(self, text: str, timeout: float = 45) -> list[dict]:
        deadline = time.monotonic() + timeout
        while True:
            with self.engine.connect() as connection:
                rows = [dict(row) for row in connection.execute(sqlalchemy.select(LOGS.c.body, LOGS.c.level, LOGS.c.trace_id)
                        .where(LOGS.c.project_id == self.project_id, LOGS.c.body.contains(text))).mappings()]
            if rows or time.monotonic() > deadline:
                return rows
            time.sleep(0.3)


def frames(event: dict) -> list[dict]:
    return [frame for value in event.get("exception", {}).get("values", [])
            for frame in (value.get("stacktrace") or {}).get("frames", [])]



def page_line(text: str) -> int:
    """The 1-based line of the other app's page (PAGE) that starts with `text` (stripped)."""
    [number] = [n for n, line in enumerate(PAGE.splitlines(), 1) if line.strip().startswith(text)]
    return number


@dataclass
class OverlayVisit:
    """What the dev overlay showed on one visit: how long each error took to be counted, and each issue."""
    waited_s: dict[str, float] = field(default_factory=dict)  # "throw"/"fail" → seconds from click to badge
    issues: list[dict] = field(default_factory=list)  # per article: text, page, links, frames, spans, logs
    answer: dict = field(default_factory=dict)  # the overlay's route's last answer for the page load's trace
    after_edit: str | None = None  # the badge once an edit of the page reloaded the backend and the page
    after_edit_titles: list[str] = field(default_factory=list)  # the issues listed then
    after_clear: str | None = None  # the badge a few polls after "Clear all"
    console: list[str] = field(default_factory=list)


ISSUES_JS = f"""() => [...document.querySelector('{OVERLAY}').shadowRoot.querySelectorAll('article.lookout-issue')].map(a => ({{
  text: a.textContent,
  page: a.querySelector('.lookout-page')?.textContent ?? '',
  pageHref: a.querySelector('.lookout-page a')?.getAttribute('href') ?? '',
  component: a.querySelector('.lookout-component')?.textContent ?? '',
  element: a.querySelector('.lookout-element')?.textContent ?? '',
  frames: [...a.querySelectorAll('.lookout-frame')].map(f => ({{
    text: f.textContent, mapped: f.classList.contains('lookout-mapped'),
    href: f.querySelector('a.lookout-open')?.getAttribute('href') ?? ''}})),
  spans: [...a.querySelectorAll('.lookout-span')].map(s => s.textContent),
  logs: [...a.querySelectorAll('.lookout-log')].map(l => l.textContent),
}}))"""


def overlay_visit(browser: Browser, url: str, page_file: Path) -> OverlayVisit:
    """Open the page, click the browser error's and the handler error's buttons (timing each until the
    overlay's badge counts it), log a line, then open the overlay and read every issue in it; then edit the
    page's Python (`page_file`: Reflex reloads the backend and Vite updates the page), read the badge, and
    clear every issue, as a developer does once the edit fixed them."""
    seen = OverlayVisit()
    context = browser.new_context()
    try:
        page = context.new_page()
        page.on("console", lambda message: seen.console.append(f"{message.type}: {message.text[:300]}"))
        page.goto(url + "/")
        page.wait_for_function("() => window.__reflex !== undefined && !!document.querySelector('#title')", timeout=60_000)
        page.wait_for_function(f"() => ({BADGE_TEXT})() === '0 errors'", timeout=30_000)
        for button, count in (("throw", "1 error"), ("fail", "2 errors")):
            started = time.monotonic()
            page.click(f"#{button}")
            page.wait_for_function(f"() => ({BADGE_TEXT})() === '{count}'", timeout=20_000)
            seen.waited_s[button] = time.monotonic() - started
        page.click("#log")
        page.wait_for_function("() => document.querySelector('#logged')?.textContent === '1'", timeout=30_000)
        page.click(f"{OVERLAY} #lookout-dev-badge")
        shown = f"document.querySelector('{OVERLAY}').shadowRoot"
        page.wait_for_function(f"() => {shown}.querySelectorAll('.lookout-span').length > 0"
                               f" && {shown}.querySelectorAll('.lookout-mapped').length > 0", timeout=20_000)
        page.wait_for_timeout(1500)  # the log line's trace, a poll later
        seen.issues = page.evaluate(ISSUES_JS)
        seen.answer = page.evaluate(
            "async () => (await fetch('/monitoring/dev/events?after=0&traces=' + window.lookout._trace.t)).json()")
        original = page_file.read_text()
        page_file.write_text(original.replace('rx.heading("another app"', 'rx.heading("another app, edited"'))
        try:
            page.wait_for_function("() => document.querySelector('#title')?.textContent === 'another app, edited'",
                                   timeout=120_000)
            page.wait_for_timeout(3000)  # a few of the overlay's polls, against the reloaded backend
            # React's hot update may drop the overlay's element from <body>; the overlay puts it back on its next poll.
            page.wait_for_function(f"() => ({BADGE_TEXT})() !== null", timeout=10_000)
            seen.after_edit = page.evaluate(BADGE_TEXT)
            # Opened in one step in the page (were the element away for a moment, a visibility check and a
            # click would close the panel that was open), then waited for.
            page.evaluate(f"""() => {{ const root = document.querySelector('{OVERLAY}')?.shadowRoot;
                if (root?.querySelector('#lookout-dev-panel')?.hidden) root.querySelector('#lookout-dev-badge').click(); }}""")
            page.wait_for_selector(f"{OVERLAY} #lookout-dev-panel", state="visible", timeout=10_000)
            titles = f"document.querySelector('{OVERLAY}').shadowRoot.querySelectorAll('.lookout-title')"
            seen.after_edit_titles = page.evaluate(f"() => [...{titles}].map(t => t.textContent)")
            page.click(f"{OVERLAY} #lookout-dev-clear-all")
            page.wait_for_timeout(3000)
            seen.after_clear = page.evaluate(BADGE_TEXT)
        finally:
            page_file.write_text(original)
    finally:
        context.close()
    return seen
