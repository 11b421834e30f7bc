"""The home page's handler as any websocket client could call it: in Sentry mode it says where the
newest build's source maps went (reflex_lookout/sourcemaps/to_sentry.py), to this machine and signed-in users
only; in local mode it says nothing about them."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from app import db
from app.console import state as console
from app.console.accounts import COOKIE, Accounts, Viewer
from app.pages import home
from app.pages.home import HomeState
from app.settings import Settings
from reflex_lookout.sourcemaps import to_sentry
from tests.console.clients import LOOPBACK, STRANGER, client_state, run, serve_console_in
from tests.environment import LOCAL_ENV
from tests.sourcemaps import fake_bundles

SENTRY_ENV = {"SENTRY_DSN": "https://key@o1.ingest.sentry.io/2", "SENTRY_AUTH_TOKEN": "f" * 64,
              "SENTRY_ORG": "acme", "SENTRY_PROJECT": "lookout"}


@pytest.fixture
def bundles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A console database, and one build on disk, uploaded to SENTRY_ENV's project at 1970-01-02."""
    engine = db.engine(f"sqlite:///{tmp_path / 'console.db'}")
    db.migrate(engine)
    console.use_database(engine)  # the pages' database (app/console/state.py), until the test ends
    serve_console_in(engine)  # the tunnel's figures on the home page
    accounts = Accounts(engine, from_env={})
    accounts.add_user("vera", "viewer", "vera-password")
    console.use_database(engine, accounts)
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web"))  # where the bundles are
    directory = fake_bundles.bundle_of(tmp_path / "web" / "lookout-sourcemaps", 1)
    (directory / to_sentry.STATUS).write_text(json.dumps({
        "state": "ok", "at": 86400.0, "url": "", "org": "acme", "project": "lookout", "sentence": "uploaded"}))
    yield directory
    console.use_database(None)
    console.serve_in()


def loaded(who: dict[str, object], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> HomeState:
    monkeypatch.setattr(home, "SETTINGS", Settings.from_env(env))
    state = client_state(HomeState, who, "/")
    asyncio.run(run(HomeState.event_handlers["load"], state, []))
    return state


def test_sentry_mode_tells_the_console_where_the_newest_builds_maps_went(
    bundles: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uploaded = f"Source maps of build {bundles.name} uploaded to Sentry at 1970-01-02 00:00:00 UTC"
    assert loaded(LOOPBACK, SENTRY_ENV, monkeypatch).sentry_maps == uploaded
    session = console.accounts().start_session(Viewer("vera", "viewer"))
    signed_in = {"ip": "203.0.113.9", "headers": {"host": "lookout.example:3000", "cookie": f"{COOKIE}={session}"}}
    assert loaded(signed_in, SENTRY_ENV, monkeypatch).sentry_maps == uploaded
    stranger = loaded(STRANGER, SENTRY_ENV, monkeypatch)
    assert stranger.sentry_maps == "" and stranger.destination == "o1.ingest.sentry.io"  # the page, without the console's part
    without_token = {k: v for k, v in SENTRY_ENV.items() if k != "SENTRY_AUTH_TOKEN"}
    assert loaded(LOOPBACK, without_token, monkeypatch).sentry_maps == to_sentry.STAY_LOCAL


def test_local_mode_says_nothing_of_sentry(bundles: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert loaded(LOOPBACK, {**LOCAL_ENV, **SENTRY_ENV, "SENTRY_DSN": ""}, monkeypatch).sentry_maps == ""


def test_the_tunnels_figures_say_whose_they_are_so_accepted_and_kept_never_read_as_contradictory() -> None:
    """"Accepted 0" beside "Kept 2" is what a restarted process (or another worker, or the server's
    own SDK, which writes to the outbox without passing the tunnel) shows: the two are labelled as
    the different sources they are, in two groups."""
    snapshot = {"accepted": 0, "forwarded": 0, "retrying": 0, "rate_limited": 0, "rejected_total": 1, "dropped_total": 0,
                "outbox": {"local": {"envelopes": 2, "bytes": 10}, "pending": {"envelopes": 0, "bytes": 0}}}
    stored, counted = home.tunnel_figures(snapshot)
    assert stored[0] == ("Kept for the inbox (stored)", "2", "figure-local")
    assert counted[0] == ("Accepted by this process since it started", "0", "figure-accepted")
    assert all("(stored)" in label for label, _, _ in stored)
    assert not any("stored" in label for label, _, _ in counted)
    assert [key for _, _, key in stored + counted] == [
        "figure-local", "figure-pending", "figure-accepted", "figure-forwarded", "figure-retrying", "figure-rate-limited",
        "figure-rejected", "figure-dropped"]
    assert home.counted_by(4242, 86400.0) == "process 4242, started 1970-01-02 00:00 UTC"


def test_the_console_sees_which_process_counted_the_figures(bundles: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = loaded(LOOPBACK, LOCAL_ENV, monkeypatch)
    assert [key for _, _, key in state.stored_figures] == ["figure-local", "figure-pending"]
    assert state.figures[0][2] == "figure-accepted"
    assert state.counted_by.startswith(f"process {os.getpid()}, started ")
    stranger = loaded(STRANGER, LOCAL_ENV, monkeypatch)
    assert (stranger.figures, stranger.stored_figures, stranger.counted_by) == ([], [], "")


def test_the_page_links_its_json_and_shows_commands_as_code_not_backticks() -> None:
    compiled = str(home.page())
    assert "`" not in compiled
    assert 'jsx(RadixThemesCode,{},"python -m app.projects.registry add NAME")' in compiled
    opened = compiled.index('id:"stats-link"')
    # A document load: React Router's client-side navigation would show the 404 page for an API route.
    assert "ReactRouterLink,{reloadDocument:true," in compiled[opened:opened + 200]
    assert "RadixThemesLink" in compiled[opened - 200:opened]  # drawn as a link, not as the text around it
