"""Sentry mode end to end: the app built for production (`reflex run --env prod`, in a copy of the
project) with SENTRY_DSN, SENTRY_URL, SENTRY_AUTH_TOKEN, SENTRY_ORG and SENTRY_PROJECT naming a
second Lookout (`app.standalone.inbox` under granian) that plays Sentry: the build uploads its maps
there with the pinned sentry-cli, the home page says so, and a `/try` error from Chromium, forwarded
through the tunnel to the second Lookout, arrives there with its original frames."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from app.inbox.reading import InboxReader
from reflex_lookout.sourcemaps import bundle, to_sentry
from tests.e2e.app_server import AppServer
from tests.e2e.helpers import LOG_DIR, _copy_project, open_page, serving
from tests.sourcemaps.second_lookout import SecondLookout, serving_second_lookout


@pytest.fixture(scope="module")
def sentry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecondLookout]:
    yield from serving_second_lookout(tmp_path_factory.mktemp("sentry"))


@pytest.fixture(scope="module")
def sentry_mode_app(request: pytest.FixtureRequest, app_server: AppServer, sentry: SecondLookout,
                    tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    """The app built and served in Sentry mode, reporting to and uploading to `sentry` (`app_server`
    first: its build installed the front end this copy is built with)."""
    root = tmp_path_factory.mktemp("sentry-mode") / "lookout"
    _copy_project(root)
    dsn = f"http://{sentry.public_key}@127.0.0.1:{sentry.server.port}/{sentry.project_id}"
    env = {"DATABASE_URL": f"sqlite:///{root / 'sentry-mode.db'}", "SENTRY_DSN": dsn,
           "SENTRY_URL": sentry.server.url, "SENTRY_AUTH_TOKEN": sentry.token, "SENTRY_ORG": "lookout",
           "SENTRY_PROJECT": str(sentry.project_id), "LOOKOUT_SERVER_MONITORING": "off"}
    yield from serving(request, AppServer(log_path=LOG_DIR / f"sentry-mode-{time.strftime('%Y%m%d-%H%M%S')}.log",
                                 env=env, root=root))


def bundles_of(server: AppServer) -> Path:
    return server.root / ".web" / bundle.DIRECTORY


def test_the_build_uploads_its_maps_and_the_forwarded_errors_are_symbolicated_there(
    sentry_mode_app: AppServer, sentry: SecondLookout, page: Page
) -> None:
    [(directory, manifest)] = bundle.present(bundles_of(sentry_mode_app))
    status = to_sentry.read_status(directory)
    assert status is not None and status.state == "ok", status
    [(project_id, files)] = sentry.stored_builds()
    assert project_id == sentry.project_id and files == {f.debug_id: f.asset_path for f in manifest.files}
    # The token is nowhere in what the app logged, nor in the status file.
    assert sentry.token not in sentry_mode_app.log_path.read_text(errors="replace")
    assert sentry.token not in (directory / to_sentry.STATUS).read_text()
    # The home page says where the maps went.
    open_page(page, sentry_mode_app, "/")
    expect(page.locator("#status-sourcemaps")).to_contain_text(
        f"Source maps of build {manifest.build_id} uploaded to Sentry at ")
    # A browser error, through the tunnel and the forwarder to the second Lookout, symbolicated there.
    open_page(page, sentry_mode_app, "/try")
    page.click("#try-thrown")
    expect(page.locator("#try-confirmation")).to_contain_text("sent as event", timeout=10_000)
    event_id = page.locator("#try-confirmation").text_content().split("event ")[1].rstrip(".")
    deadline = time.monotonic() + 60
    while (stored := InboxReader(sentry.engine).event(event_id)) is None:
        assert time.monotonic() < deadline, f"event {event_id} never reached the second Lookout"
        time.sleep(0.5)
    frames = stored["event"]["exception"]["values"][-1]["stacktrace"]["frames"]
    [thrower] = [f for f in frames if f.get("function") == "lookoutTry.throwLater"]
    assert "throw new Error('Lookout try: a thrown error')" in thrower["context_line"]
    assert thrower["data"]["sourcemap"]["resolved_with"] == "debug_id"
