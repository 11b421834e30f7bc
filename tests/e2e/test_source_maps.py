"""Readable browser stacks in the built app: every chunk has a debug ID and a map the server keeps
(never serves), and each `/try` error arrives symbolicated, its frames naming the original code and
the Python page; the same error from a second build (new chunk hashes, another directory) is the
same issue."""

from __future__ import annotations

import gzip
import time
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from reflex_lookout.sourcemaps.pages import page_sources, route_module
from tests.e2e.app_server import ROOT, AppServer
from tests.e2e.helpers import LOG_DIR, TRY_MODULE, _copy_project, inbox_event, open_page, serving, tree_state

ASSETS = ROOT / ".web" / "build" / "client" / "assets"

# (button, the function that threw, text of the statement that threw)
CASES = [
    ("try-thrown", "lookoutTry.throwLater", "throw new Error('Lookout try: a thrown error')"),
    ("try-rejection", "lookoutTry.rejection", "Promise.reject(new Error('Lookout try: an unhandled rejection'))"),
    ("try-script", "lookoutTry.missingFunction", "return lookoutTryMissingFunction()"),
    ("try-report", "lookoutTry.report", "window.lookout.captureException(new Error('Lookout try: a reported error'))"),
]


def trigger(page: Page, server: AppServer, button: str) -> dict:
    """Click a `/try` button; the inbox's stored event (`/api/inbox/events/<id>`)."""
    open_page(page, server, "/try")
    page.click(f"#{button}")
    expect(page.locator("#try-confirmation")).to_contain_text("sent as event", timeout=10_000)
    event_id = page.locator("#try-confirmation").text_content().split("event ")[1].rstrip(".")
    return inbox_event(server, event_id)


def main_exception(stored: dict) -> dict:
    return stored["event"]["exception"]["values"][-1]


@pytest.mark.parametrize(("button", "function", "statement"), CASES)
def test_each_try_error_arrives_with_its_original_frames(
    app_server: AppServer, page: Page, button: str, function: str, statement: str
) -> None:
    stored = trigger(page, app_server, button)
    exception = main_exception(stored)
    frames = exception["stacktrace"]["frames"]
    [thrower] = [f for f in frames if f.get("function") == function]
    assert thrower["filename"] == TRY_MODULE, thrower
    assert not thrower["filename"].startswith("/") and str(ROOT) not in thrower["filename"]
    assert statement in thrower["context_line"]
    assert thrower["pre_context"] and thrower["post_context"]
    assert thrower["in_app"] is True
    assert thrower["data"]["sourcemap"]["resolved_with"] == "debug_id"
    assert thrower["data"]["python_page"] == {"module": "app.pages.try_errors", "function": "page",
                                              "file": "app/pages/try_errors.py", "line": thrower["data"]["python_page"]["line"]}
    # The minified frames stay with the event, naming the served chunks.
    raw = exception["raw_stacktrace"]["frames"]
    assert any("/assets/" in (f.get("abs_path") or f.get("filename") or "") for f in raw)
    assert not any(f.get("function") == function and f.get("filename") == TRY_MODULE for f in raw)
    # Every frame from a served chunk found its map.
    assert not [f for f in frames if f.get("data", {}).get("sourcemap_error")], frames
    # The SDK named each chunk's debug ID.
    images = stored["event"]["debug_meta"]["images"]
    assert images and all(image["type"] == "sourcemap" and image["debug_id"] for image in images)
    issue = httpx.get(f"{app_server.url}/api/inbox/issues/{stored['issue_id']}").json()
    assert issue["culprit"] == f"{TRY_MODULE} in {function}"


def test_maps_are_kept_but_never_served(app_server: AppServer) -> None:
    chunks = sorted(ASSETS.glob("*.js"))
    assert len(chunks) > 10
    assert not list(ASSETS.glob("*.map")) and not list(ASSETS.glob("*.map.gz"))
    for chunk in chunks:
        served = httpx.get(f"{app_server.url}/assets/{chunk.name}")
        assert served.status_code == 200
        assert "sourceMappingURL" not in served.text, chunk.name
        # React Router's route manifest is data, not code: it has no map and needs no debug ID.
        assert "//# debugId=" in served.text or served.text.startswith("window.__reactRouterManifest="), chunk.name
        assert httpx.get(f"{app_server.url}/assets/{chunk.name}.map").status_code == 404
        packed = chunk.with_name(chunk.name + ".gz")
        if packed.exists():  # the precompressed copy is of the injected chunk
            assert gzip.decompress(packed.read_bytes()) == chunk.read_bytes(), packed.name


def test_every_page_names_the_modules_reflex_generated_for_it(app_server: AppServer) -> None:
    """The page map's names are the files the build really has (reflex_lookout/sourcemaps/pages.py names them
    with Reflex's own functions; here they meet what Reflex wrote)."""
    import app.app

    web = ROOT / ".web"
    routes = {f".web/app/routes/{p.name}" for p in (web / "app" / "routes").iterdir()}
    page_components = {f".web/app_components/app/pages/{p.name}" for p in (web / "app_components/app/pages").iterdir()}
    found = page_sources(app.app.app)
    assert {route_module(route) for route in app.app.app._unevaluated_pages} <= routes
    assert routes | page_components <= set(found)


def test_building_leaves_the_tree_as_it_was(app_server: AppServer) -> None:
    assert tree_state() == app_server.tree_before


@pytest.fixture(scope="module")
def second_build(request: pytest.FixtureRequest, app_server: AppServer,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The same app built again in another directory, after a change that moves the chunk hashes and
    the positions in the chunk that throws, serving the same database (as after a deploy)."""
    root = tmp_path_factory.mktemp("second-build") / "lookout"
    _copy_project(root)
    page_source = root / "app" / "pages" / "try_errors.py"
    text = page_source.read_text()
    assert '"const lookoutTry = {\\n"' in text
    page_source.write_text(text.replace('"const lookoutTry = {\\n"', '"// the second build\\n\\nconst lookoutTry = {\\n"'))
    yield from serving(request, AppServer(log_path=LOG_DIR / f"second-build-{time.strftime('%Y%m%d-%H%M%S')}.log",
                                 env=app_server.env, root=root))


def test_the_same_error_from_two_builds_is_one_issue(
    app_server: AppServer, second_build: AppServer, browser: Browser
) -> None:
    first_chunks = {p.name for p in ASSETS.glob("*.js")}
    second_chunks = {p.name for p in (second_build.root / ".web" / "build" / "client" / "assets").glob("*.js")}
    assert first_chunks != second_chunks
    stored = []
    for server in (app_server, second_build):
        context = browser.new_context()
        try:
            stored.append(trigger(context.new_page(), server, "try-thrown"))
        finally:
            context.close()
    first, second = stored
    raw_files = [{f.get("filename") for f in main_exception(s)["raw_stacktrace"]["frames"]} for s in stored]
    assert raw_files[0] != raw_files[1]  # different chunks threw ...
    assert first["issue_id"] == second["issue_id"]  # ... and it is one issue
    throwers = [[f for f in main_exception(s)["stacktrace"]["frames"] if f.get("function") == "lookoutTry.throwLater"][0]
                for s in stored]
    assert throwers[0]["filename"] == throwers[1]["filename"]
    assert throwers[0]["lineno"] != throwers[1]["lineno"]  # the second build's module has two more lines
    assert throwers[1]["filename"] == TRY_MODULE


def test_the_issue_page_shows_original_frames_and_can_switch_to_minified(app_server: AppServer, page: Page) -> None:
    stored = trigger(page, app_server, "try-thrown")
    page.goto(f"{app_server.url}/issue?id={stored['issue_id']}")
    stack = page.locator("#issue-stack")
    expect(page.locator("#issue-culprit")).to_have_text(f"{TRY_MODULE} in lookoutTry.throwLater", timeout=15_000)
    # The in-app frames are open at their failing lines (the innermost first), with the page they were generated from ...
    expect(stack.locator(".stack-context-current").first).to_contain_text("throw new Error('Lookout try: a thrown error')")
    expect(stack.locator(".stack-python-page").first).to_contain_text("app/pages/try_errors.py in page")
    # ... and the SDK's own frame is folded away.
    fold = stack.locator(".stack-library-fold").first
    expect(fold).to_contain_text("library frame")
    expect(stack.locator(".stack-frame.library")).to_have_count(0)
    fold.click()
    expect(stack.locator(".stack-frame.library").first).to_contain_text(".web/node_modules/@sentry/")
    page.click("#stack-switch-minified")
    expect(stack).to_contain_text("/assets/_try_._index-")
    expect(stack).not_to_contain_text(TRY_MODULE)
    page.click("#stack-switch-original")
    expect(stack).to_contain_text(TRY_MODULE)


@pytest.fixture(scope="module")
def dev_app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The app under `reflex run` in dev mode (Vite serving unminified modules with inline maps), in
    a copy of the project with a database of its own."""
    root = tmp_path_factory.mktemp("dev") / "lookout"
    _copy_project(root)
    # The database outside the copy: `reflex run` in dev mode restarts its backend on any change to a
    # file at the project's top level that existed when it started, and SQLite's `dev.db-wal` beside
    # the code changes with every write (the tunnel's included) - the backend restarted under the
    # test's click, and on a busy machine the page's websocket stayed down past every retry.
    database = tmp_path_factory.mktemp("dev-db") / "dev.db"
    server = AppServer(log_path=LOG_DIR / f"dev-{time.strftime('%Y%m%d-%H%M%S')}.log", root=root, dev=True,
                       env={"DATABASE_URL": f"sqlite:///{database}", "SENTRY_DSN": ""})
    server.url = f"http://localhost:{server.port}"  # the dev server's own origin, as `reflex run` prints it
    yield from serving(request, server)


def test_dev_mode_stacks_show_the_source_file_and_line(dev_app: AppServer, page: Page) -> None:
    page.set_default_timeout(60_000)  # Vite transforms each module on its first request
    stored = trigger(page, dev_app, "try-thrown")
    frames = main_exception(stored)["stacktrace"]["frames"]
    [thrower] = [f for f in frames if f.get("context_line", "").strip() == "throw new Error('Lookout try: a thrown error');"]
    generated = (dev_app.root / TRY_MODULE).read_text().splitlines()
    assert thrower["filename"] == TRY_MODULE
    assert generated[thrower["lineno"] - 1].strip() == "throw new Error('Lookout try: a thrown error');"
    assert thrower["data"]["sourcemap"]["build_id"] == "dev"
    assert thrower["data"]["python_page"]["file"] == "app/pages/try_errors.py"
    assert "/app/routes/" in main_exception(stored)["raw_stacktrace"]["frames"][-1]["filename"]
