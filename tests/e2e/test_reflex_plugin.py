"""Issue #27's "Done when": another Reflex app gets Lookout's monitoring from `reflex-lookout` and one line.

The plugin is built as a wheel (from a copy of plugin/) and installed with reflex==0.10.1 into a virtual
environment of its own; `reflex init --template blank` makes a new app there (offline: the project's bun),
whose rxconfig.py gets the one line `reflex_lookout.Monitoring()` and whose page has a button that throws in
the browser (from a function compiled into the page's route module), a button whose event handler raises and
one whose handler logs at INFO. A real Lookout receives (the inbox alone under granian,
tests/sourcemaps/second_lookout.py), with a project for each run: the app's `SENTRY_DSN` is that project's
DSN, and `SENTRY_AUTH_TOKEN`/`SENTRY_URL`/`SENTRY_ORG`/`SENTRY_PROJECT` a Lookout upload token for it. The app
runs in prod (`reflex run --env prod`), then in dev (`reflex run`); each time Chromium visits it, clicks the
three buttons and every request the browser made is recorded. Then, in the Lookout's database: the browser
error (its frames mapped to the app's route module), the handler's error (its Python frame, and in the trace
of the page load), the log line; and in the browser's requests: reports posted to the app's own
`/monitoring`, nothing to the Lookout's port.

How each passes: the prod frames through the build step's debug IDs and upload (each map names its
Python pages), the dev frames through the dev project's listed dev server and the page line the plugin
writes into each route module (`page_marker`), the handler's error through event tracing (it is reported
inside the failed event's trace). A bad `SENTRY_DSN` must stop `reflex run` with its sentence alone.

The times of each step are printed at the end of the module (run it with `-s`) and are in
docs/design/reflex-plugin.md §11.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser

from app.inbox.reading import InboxReader
from app.projects.options_store import ProjectOptionsStore
from app.projects.registry import Projects
from app.projects.sourcemap_options import SourceMapOptions
from app.sourcemaps.tokens import Tokens
from tests.e2e.other_reflex_app import (
    APP_NAME,
    BROWSER_ERROR,
    FEEDBACK_TEXT,
    HANDLER_ERROR,
    INDEX_MODULE,
    LOG_LINE,
    STEPS,
    OtherAppServer,
    OverlayVisit,
    Received,
    Visit,
    app_env,
    build_wheel,
    frames,
    make_app,
    make_venv,
    overlay_visit,
    page_line,
    step,
    visit,
)
from tests.sourcemaps.second_lookout import SecondLookout, second_lookout

MODES = ["prod", "dev"]


@pytest.fixture(scope="module", autouse=True)
def timings() -> Iterator[None]:
    STEPS.clear()
    yield
    print("\nreflex-lookout end-to-end, each step (wall s, CPU s of this process and all its descendants):")
    for name, (wall, cpu) in STEPS.items():
        print(f"  {name:<48} {wall:7.1f} {cpu:7.1f}")


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("reflex-plugin")


@pytest.fixture(scope="module")
def lookout(work: Path) -> Iterator[SecondLookout]:
    (work / "lookout").mkdir()
    with step("Lookout (inbox under granian) started"):
        found = second_lookout(work / "lookout")
    try:
        yield found
    finally:
        found.stop()


@pytest.fixture(scope="module")
def built(work: Path) -> tuple[Path, Path]:
    """The other app's venv and folder: the wheel built and installed, the app made and given the one line."""
    with step("wheel built (pip wheel, isolated)"):
        wheel = build_wheel(work)
    with step("venv + pip install reflex==0.10.1 <wheel>"):
        venv = make_venv(work, wheel)
    with step("reflex init --template blank + the one line"):
        root = make_app(work / APP_NAME, venv)
    return venv, root


@dataclass
class Run:
    mode: str
    server: OtherAppServer
    visit: Visit
    received: Received
    lookout_port: int


@pytest.fixture(scope="module", params=MODES)
def run(request: pytest.FixtureRequest, built: tuple[Path, Path], lookout: SecondLookout, browser: Browser,
        work: Path) -> Iterator[Run]:
    """The other app served in one mode, reporting to a project of its own in the Lookout, visited once."""
    mode = request.param
    venv, root = built
    project = Projects(lookout.engine).add(f"other-app-{mode}")
    _row, token = Tokens(lookout.engine).add(project.id, label=f"other app {mode}")
    dsn = f"http://{project.public_key}@127.0.0.1:{lookout.server.port}/{project.id}"
    env = {**app_env(venv, dsn), "SENTRY_URL": lookout.server.url, "SENTRY_AUTH_TOKEN": token,
           "SENTRY_ORG": "lookout", "SENTRY_PROJECT": str(project.id),
           # Sentry's feedback widget (off by default): in prod; the dev run shows it stays out unless asked for.
           "REFLEX_LOOKOUT_FEEDBACK": "on" if mode == "prod" else ""}
    server = OtherAppServer(root, venv, env, work / f"{mode}.log", dev=mode == "dev")
    if server.dev:  # its frames name Vite's modules: the project lists that dev server (design §7)
        ProjectOptionsStore(lookout.engine).set_sourcemaps(project.id, SourceMapOptions(dev_servers=(server.url,)))
    try:
        with step(f"{mode}: reflex run until it answers"):
            server.start()
        with step(f"{mode}: Chromium visit (load, three clicks, flush)"):
            seen = visit(browser, server.url)
        yield Run(mode, server, seen, Received(lookout.engine, project.id), lookout.server.port)
    finally:
        server.stop()
        print(f"\n{mode} app log: {server.log_path}; Lookout's: {lookout.server.log}")


def _context(run: Run) -> str:
    return f"\n--- {run.mode} app log:\n{run.server.log_tail(40)}\n--- browser console:\n" + "\n".join(run.visit.console[-20:])


def test_browser_reports_go_through_the_app_own_tunnel(run: Run) -> None:
    app_origin = urlsplit(run.server.url).netloc
    to_lookout = [f"{method} {url}" for method, url in run.visit.requests if urlsplit(url).port == run.lookout_port]
    assert not to_lookout, to_lookout
    tunnel_posts = [url for method, url in run.visit.requests
                    if method == "POST" and urlsplit(url).path == "/monitoring"]
    assert tunnel_posts, f"no POST to /monitoring: {run.visit.requests}{_context(run)}"
    assert all(urlsplit(url).netloc == app_origin for url in tunnel_posts), tunnel_posts
    # Nothing else the browser posted looks like a report to anywhere else (in dev, the overlay's copy
    # of each envelope goes to its route on the app's own origin).
    overlay = f"{run.server.url}/monitoring/dev/envelope"
    others = [url for method, url in run.visit.requests if method == "POST" and "envelope" in url and url != overlay]
    assert not others, others


def test_browser_error_arrives(run: Run) -> None:
    event = run.received.error(BROWSER_ERROR)
    assert event is not None, f"the browser error is not in the Lookout's project{_context(run)}"
    assert event["platform"] == "javascript" and event["sdk"]["name"].startswith("sentry.javascript"), event["sdk"]


def test_browser_error_frames_mapped_to_the_app_sources(run: Run) -> None:
    """The frames of the browser error, mapped to the app's sources with their Python page."""
    event = run.received.error(BROWSER_ERROR)
    assert event is not None, f"the browser error is not in the Lookout's project{_context(run)}"
    found = frames(event)
    throwers = [frame for frame in found if frame.get("function") == "otherAppThrowLater"]
    assert throwers, [(f.get("filename"), f.get("function"), f.get("lineno")) for f in found]
    thrower = throwers[-1]
    assert thrower["filename"] == INDEX_MODULE, thrower
    assert "throw new Error" in (thrower.get("context_line") or ""), thrower
    # ... and to the Python page that made that module, as Lookout's own pages are (tests/e2e/test_source_maps.py).
    page = thrower.get("data", {}).get("python_page") or {}
    assert (page.get("module"), page.get("function"), page.get("file")) == (
        f"{APP_NAME}.{APP_NAME}", "index", f"{APP_NAME}/{APP_NAME}.py"), thrower
    assert not [frame for frame in found if frame.get("data", {}).get("sourcemap_error")], found


def test_handler_error_arrives_with_its_python_frame(run: Run) -> None:
    event = run.received.error(HANDLER_ERROR)
    assert event is not None, f"the handler's error is not in the Lookout's project{_context(run)}"
    assert event["platform"] == "python" and event["sdk"]["name"] == "sentry.python", event["sdk"]
    assert any(frame.get("function") == "fail" and (frame.get("filename") or "").endswith(f"{APP_NAME}.py")
               for frame in frames(event)), frames(event)
    assert run.visit.toast, "the user saw no toast for the handler's error"


def test_handler_error_in_the_page_load_trace(run: Run) -> None:
    """The handler's error is in the trace of the page load whose click sent the event."""
    event = run.received.error(HANDLER_ERROR)
    assert event is not None, f"the handler's error is not in the Lookout's project{_context(run)}"
    page_loads = {row["trace_id"] for row in run.received.transactions("pageload")}
    assert page_loads, f"no page load transaction in the Lookout's project{_context(run)}"
    assert event["contexts"]["trace"]["trace_id"] in page_loads, (event["contexts"]["trace"], page_loads)


def test_log_line_arrives(run: Run) -> None:
    lines = run.received.log_lines(LOG_LINE)
    assert lines, f"the log line is not in the Lookout's project{_context(run)}"
    assert lines[0]["level"] == "info" and lines[0]["body"] == f"{LOG_LINE} (1)", lines


def test_a_bad_dsn_stops_the_start_with_a_sentence_naming_it(built: tuple[Path, Path]) -> None:
    venv, root = built
    env = {**os.environ, **app_env(venv, "not-a-dsn")}
    done = subprocess.run([str(venv / "bin" / "reflex"), "run", "--env", "prod"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == ["reflex-lookout: SENTRY_DSN 'not-a-dsn' must start with http:// or https://."], (
        done.stdout[-2000:], done.stderr[-2000:])


# Issue 39: the dev overlay. The page's errors appear in it under `reflex run`, with no DSN and nothing else to
# set up (the app's one line); a production build carries none of it.

@pytest.fixture(scope="module")
def alone(built: tuple[Path, Path], browser: Browser, work: Path) -> Iterator[tuple[OtherAppServer, OverlayVisit]]:
    """The other app under `reflex run` (dev) with no DSN at all, visited once with the overlay read."""
    venv, root = built
    server = OtherAppServer(root, venv, app_env(venv, ""), work / "dev-alone.log", dev=True)
    try:
        with step("dev, no DSN: reflex run until it answers"):
            server.start()
        with step("dev, no DSN: Chromium visit with the overlay"):
            seen = overlay_visit(browser, server.url, root / APP_NAME / f"{APP_NAME}.py")
        print(f"\nthe overlay counted each error after (s): {seen.waited_s}")
        yield server, seen
    finally:
        server.stop()


def _issue(seen: OverlayVisit, text: str) -> dict:
    found = [issue for issue in seen.issues if text in issue["text"]]
    assert len(found) == 1, (text, [issue["text"][:200] for issue in seen.issues], seen.console[-20:])
    return found[0]


def test_the_overlay_shows_the_browser_error_mapped_to_its_source_and_python_page(
        alone: tuple[OtherAppServer, OverlayVisit]) -> None:
    server, seen = alone
    issue = _issue(seen, BROWSER_ERROR)
    module = (server.root / INDEX_MODULE).read_text().splitlines()
    [throw_line] = [n for n, line in enumerate(module, 1) if "throw new Error" in line]
    mapped = [frame for frame in issue["frames"] if frame["mapped"] and f"{INDEX_MODULE}:{throw_line}" in frame["text"]]
    assert mapped, issue["frames"]
    assert mapped[0]["href"].startswith(f"vscode://file{server.root}/{INDEX_MODULE}:{throw_line}:"), mapped[0]
    index_line = page_line("def index()")
    assert f"{APP_NAME}/{APP_NAME}.py:{index_line}" in issue["page"], issue
    assert issue["pageHref"] == f"vscode://file{server.root}/{APP_NAME}/{APP_NAME}.py:{index_line}:1", issue
    assert "button#throw" in issue["element"], issue


def test_the_overlay_shows_the_handler_error_with_its_python_frame_and_trace(
        alone: tuple[OtherAppServer, OverlayVisit]) -> None:
    server, seen = alone
    issue = _issue(seen, HANDLER_ERROR)
    raise_line = page_line("raise RuntimeError(")
    python = [frame for frame in issue["frames"] if f"{APP_NAME}.py:{raise_line}" in frame["text"]]
    assert python and "raise RuntimeError(" in python[0]["text"], issue["frames"]
    assert python[0]["href"] == f"vscode://file{server.root}/{APP_NAME}/{APP_NAME}.py:{raise_line}:1", python[0]
    assert f"{APP_NAME}/{APP_NAME}.py:{page_line('def index()')}" in issue["page"], (  # the page the event came from
        issue, [(i["python_page"], i["url"], i["transaction"], i.get("route")) for i in seen.answer.get("issues", [])])
    assert any("State.fail" in span for span in issue["spans"]), issue["spans"]  # the handler's transaction
    assert any("pageload" in span for span in issue["spans"]), issue["spans"]  # in the page load's trace


def test_the_overlay_survives_an_edit_and_clears(alone: tuple[OtherAppServer, OverlayVisit]) -> None:
    """An edit of the page reloads the backend (its memory starts empty) and updates the page, or reloads it:
    the overlay is still there with both errors it showed (a reload may report more of its own: seen once on a
    loaded machine, "3 errors"), and "Clear all" leaves it at zero."""
    _, seen = alone
    print(f"\nafter the edit the overlay listed: {seen.after_edit_titles}")
    assert seen.after_edit is not None and seen.after_edit != "0 errors", seen.console[-20:]
    for error in (BROWSER_ERROR, HANDLER_ERROR):
        assert any(error in title for title in seen.after_edit_titles), (seen.after_edit_titles, seen.console[-20:])
    assert seen.after_clear == "0 errors", seen.console[-20:]


def test_the_overlay_counts_each_error_promptly(alone: tuple[OtherAppServer, OverlayVisit]) -> None:
    """Each error is counted by the badge (the times are printed and in docs/dev-overlay.md; issue 39 asks for
    2 s, which a test on a shared machine does not hold as an assertion)."""
    _, seen = alone
    assert set(seen.waited_s) == {"throw", "fail"}, seen.waited_s


def test_the_prod_build_carries_none_of_the_overlay(run: Run) -> None:
    """Under `--env prod` no byte of the overlay is built or served; under dev (with a DSN) it is there."""
    built_js = list((run.server.root / ".web" / "build" / "client").rglob("*.js"))
    carrying = [path.name for path in built_js if "lookout-dev" in path.read_text(errors="replace")]
    if run.mode == "prod":
        assert built_js and not carrying, carrying
        assert run.visit.overlay is None, run.visit.overlay
    else:
        assert run.visit.overlay == "2 errors", (run.visit.overlay, _context(run))


def test_feedback_from_the_widget_is_on_its_errors_issue(run: Run) -> None:
    """Issue 40: `REFLEX_LOOKOUT_FEEDBACK=on` puts Sentry's feedback widget in the pages (prod run); a user's feedback
    sent after the page's browser error names that error, and the issue page's reader lists it there. Off by
    default (dev run): no widget."""
    if run.mode != "prod":
        assert not run.visit.feedback_widget
        return
    assert run.visit.feedback_widget, _context(run)
    feedback = run.received.feedback(FEEDBACK_TEXT)
    assert feedback is not None, f"no feedback in the Lookout's project{_context(run)}"
    assert (feedback["name"], feedback["email"]) == ("Ada", "ada@example.com"), feedback
    error = run.received.error(BROWSER_ERROR)
    assert error is not None and feedback["event_id"] == error["event_id"], (feedback, error and error["event_id"])
    issue_id = run.received.issue_of(error["event_id"])
    assert issue_id is not None
    shown = InboxReader(run.received.engine).feedback(issue_id)  # what the issue page shows (app/pages/issue_state.py)
    assert [f["message"] for f in shown] == [FEEDBACK_TEXT], shown
