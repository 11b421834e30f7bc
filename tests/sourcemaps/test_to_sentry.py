"""Sentry mode's upload of the app's own maps (reflex_lookout/sourcemaps/to_sentry.py), with the pinned
sentry-cli, to a second running Lookout standing in for Sentry: `app.standalone.inbox` under granian
on loopback, its upload API taking a token made for one of its projects. A real build (esbuild,
tests/sourcemaps/real_build.py) is saved by the real build step; its maps land in the second
Lookout, which then symbolicates an event naming the chunks by debug ID. Sentry down, a refused
token and a missing token never fail the build; the start retries what failed."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.settings import Settings
from app.sourcemaps import own_build
from app.sourcemaps.own_build import SENTRY_CLI
from reflex_lookout.sourcemaps import bundle, to_sentry
from reflex_lookout.sourcemaps.build_step import for_host, make_bundle
from reflex_lookout.sourcemaps.pages import PageSource
from reflex_lookout.sourcemaps.sentry_cli import Target
from reflex_lookout.sourcemaps.upload_settings import UploadSettings
from tests.services import free_port
from tests.sourcemaps import real_build
from tests.sourcemaps.reflex_like_build import need_tools
from tests.sourcemaps.second_lookout import SecondLookout, frames_of, second_lookout, serving_second_lookout, stored_event

ORIGIN = "https://app.example.com"  # where the first Lookout's pages are served (any host: frames name it)


@pytest.fixture(scope="module")
def lookout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecondLookout]:
    need_tools()
    yield from serving_second_lookout(tmp_path_factory.mktemp("sentry"))


def built(work: Path, extra: str = "") -> Path:
    """A real production-like build's static directory (chunks with hidden maps)."""
    real_build.build(work / "client", work / "src", extra)
    return work / "client"


def saved(work: Path, bundles: Path, extra: str = "", url_prefix: str = "") -> Path:
    """A build saved as the build step saves it (without its upload); the bundle's directory."""
    return make_bundle(built(work, extra), bundles, SENTRY_CLI, keep=5, url_prefix=url_prefix)


def status_text(directory: Path) -> str:
    return (directory / to_sentry.STATUS).read_text()


def lookout_uploads(env: dict[str, str]) -> UploadSettings:
    """The first Lookout's upload settings, its environment being `env`."""
    return own_build.upload_settings(Settings.from_env(env))


def lazy_chunks_thrower(lookout: SecondLookout, directory: Path, manifest: bundle.Manifest, work: Path) -> dict:
    """A browser error from the build's lazy chunk, as the tunnel forwards it, naming the chunk by debug
    ID, sent to the second Lookout: its innermost frame as the Lookout stored it."""
    [lazy] = [file for file in manifest.files if "/lazy-" in file.asset_path]
    url = ORIGIN + lazy.asset_path
    event_id = uuid.uuid4().hex
    event = {"event_id": event_id, "platform": "javascript", "level": "error",
             "exception": {"values": [{"type": "Error", "value": "boom 42",
                                       "stacktrace": {"frames": frames_of(directory / lazy.js, url, work)}}]},
             "debug_meta": {"images": [{"type": "sourcemap", "code_file": url, "debug_id": lazy.debug_id}]}}
    answer = httpx.post(f"{lookout.server.url}/api/{lookout.project_id}/store/?sentry_key={lookout.public_key}",
                        json=event, timeout=30)
    assert answer.status_code == 200, answer.text
    return stored_event(lookout, event_id)["exception"]["values"][0]["stacktrace"]["frames"][-1]


def test_the_build_uploads_its_maps_and_sentry_symbolicates_the_browser_events_with_them(
    lookout: SecondLookout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="reflex_lookout.sourcemaps")
    static_dir, bundles = built(tmp_path), tmp_path / "bundles"
    (static_dir / "assets" / "style.css.map").write_text("{}")  # a map of no chunk (test_sentry_cli.py: not uploaded)

    own_build.plugin(bundles, lookout.settings()).post_build(static_dir=static_dir)

    [(directory, manifest)] = bundle.present(bundles)
    status = to_sentry.read_status(directory)
    assert status is not None and status.state == "ok", status_text(directory)
    assert (status.url, status.org, status.project) == (lookout.server.url, "lookout", str(lookout.project_id))
    assert to_sentry.report(lookout.uploads(), bundles).startswith(
        f"Source maps of build {manifest.build_id} uploaded to Sentry at ")
    # The second Lookout has the build's chunks and maps, for the project the token is for.
    [(project_id, files)] = lookout.stored_builds()
    assert project_id == lookout.project_id
    assert files == {file.debug_id: file.asset_path for file in manifest.files}
    thrower = lazy_chunks_thrower(lookout, directory, manifest, tmp_path)
    assert thrower["filename"].endswith("lazy.js") and thrower["lineno"] == 3, thrower
    assert thrower["function"] == "boom", thrower
    assert thrower["data"]["sourcemap"]["resolved_with"] == "debug_id", thrower
    # The token is in no log line and no status file.
    assert lookout.token not in caplog.text and lookout.token not in status_text(directory)
    assert "uploaded to Sentry" in caplog.text


def test_a_host_apps_build_uploads_its_maps_with_their_python_pages_to_a_lookout(
    lookout: SecondLookout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Another Reflex app's build with `Monitoring` (its step: `for_host`, SENTRY_* naming the second
    Lookout): maps out of the build, uploaded; an error of that app then maps to its `.web/` module and
    names the module's Python page, as this app's own frames do."""
    web = tmp_path / ".web"  # Reflex's layout: the build in .web/build/client, the route modules in .web/app/routes
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(web))
    static_dir = web / "build" / "client"
    real_build.build(static_dir, web / "app" / "routes", "export const host = 1;\n")
    page = PageSource("other_app.other_app", "index", "other_app/other_app.py", 7)
    bundle.write_pages(bundle.root(), {".web/app/routes/lazy.js": page})  # what pre_compile writes
    step = for_host({"SENTRY_AUTH_TOKEN": lookout.token, "SENTRY_URL": lookout.server.url, "SENTRY_ORG": "lookout",
                     "SENTRY_PROJECT": str(lookout.project_id), "LOOKOUT_SENTRY_CLI": str(SENTRY_CLI)})
    before = lookout.stored_builds()

    step.post_build(static_dir=static_dir)

    assert list(static_dir.rglob("*.map")) == []
    [(directory, manifest)] = bundle.present(bundle.root())
    status = to_sentry.read_status(directory)
    assert status is not None and status.state == "ok", status_text(directory)
    assert lookout.stored_builds()[len(before):] == [
        (lookout.project_id, {file.debug_id: file.asset_path for file in manifest.files})]
    thrower = lazy_chunks_thrower(lookout, directory, manifest, tmp_path)
    assert (thrower["filename"], thrower["function"], thrower["lineno"]) == (".web/app/routes/lazy.js", "boom", 3), thrower
    assert thrower["data"]["python_page"] == page.to_json(), thrower
    assert lookout.token not in caplog.text and lookout.token not in status_text(directory)


def test_sentry_down_never_fails_the_build_and_the_next_start_uploads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    need_tools()
    lookout = second_lookout(tmp_path, port=free_port(), start=False)  # nothing listens on its port yet
    settings = lookout.uploads()
    bundles = tmp_path / "bundles"
    static_dir = built(tmp_path / "app")

    own_build.plugin(bundles, lookout.settings()).post_build(static_dir=static_dir)  # does not raise

    [(directory, manifest)] = bundle.present(bundles)
    failed = to_sentry.read_status(directory)
    assert failed is not None and failed.state == "failed"
    assert "Could not connect to server" in failed.sentence, failed
    assert to_sentry.report(settings, bundles) == f"Upload to Sentry failed: {failed.sentence}; retried at the next start"
    assert f"not uploaded to Sentry: {failed.sentence}" in caplog.text
    try:
        lookout.server.start()
        asyncio.run(_start(bundles, settings))  # the next start, in the background
        deadline = time.monotonic() + 60
        while (status := to_sentry.read_status(directory)) is None or status.at == failed.at:
            assert time.monotonic() < deadline, "the start did not retry the upload"
            time.sleep(0.2)
        assert status.state == "ok", status
        [(project_id, files)] = lookout.stored_builds()
        assert project_id == lookout.project_id and set(files) == {file.debug_id for file in manifest.files}
        assert to_sentry.retry_pending(bundles, settings, SENTRY_CLI) == []  # uploaded: never again
    finally:
        lookout.stop()
    assert lookout.token not in caplog.text and lookout.token not in status_text(directory)


async def _start(bundles: Path, settings: UploadSettings) -> None:
    async with to_sentry.retry_at_start(settings, SENTRY_CLI, bundles):
        pass


def test_the_start_does_not_wait_for_the_upload(tmp_path: Path) -> None:
    """A Sentry that takes the connection and never answers: the start goes on; once it hangs up,
    the upload is recorded as failed."""
    need_tools()
    directory = saved(tmp_path / "app", tmp_path / "bundles")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        settings = lookout_uploads({"SENTRY_DSN": "http://key@127.0.0.1/2", "SENTRY_AUTH_TOKEN": "f" * 64,
                                      "SENTRY_ORG": "o", "SENTRY_PROJECT": "2",
                                      "SENTRY_URL": f"http://127.0.0.1:{silent.getsockname()[1]}"})
        asyncio.run(_start(tmp_path / "bundles", settings))
        assert to_sentry.read_status(directory) is None  # still waiting for an answer
    deadline = time.monotonic() + 60
    while (status := to_sentry.read_status(directory)) is None:
        assert time.monotonic() < deadline, "the upload never ended"
        time.sleep(0.2)
    assert status.state == "failed" and status.sentence, status


def test_a_refused_token_is_a_failed_upload_with_sentrys_sentence(
    lookout: SecondLookout, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bad = "0" * 64
    directory = saved(tmp_path, tmp_path / "bundles")
    before = lookout.stored_builds()

    upload = to_sentry.after_build(directory, lookout.uploads(SENTRY_AUTH_TOKEN=bad), SENTRY_CLI)

    assert upload is not None and upload.state == "failed"
    assert upload.sentence.startswith("API request failed: sentry reported an error: ")
    assert upload.sentence.endswith("(http status: 401)")
    assert to_sentry.read_status(directory) == upload
    assert bad not in caplog.text and bad not in status_text(directory)
    assert lookout.stored_builds() == before


def test_without_a_token_the_maps_stay_local_said_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="reflex_lookout.sourcemaps")
    bundles = tmp_path / "bundles"
    directory = saved(tmp_path, bundles)
    settings = lookout_uploads({"SENTRY_DSN": "http://key@127.0.0.1:9/2", "SENTRY_ORG": "o", "SENTRY_PROJECT": "2"})

    assert to_sentry.after_build(directory, settings, SENTRY_CLI) is None
    assert to_sentry.retry_pending(bundles, settings, SENTRY_CLI) == []
    asyncio.run(_start(bundles, settings))

    [record] = [r for r in caplog.records if "stay local" in r.getMessage()]
    assert record.getMessage() == f"source maps of build {directory.name} stay local: no SENTRY_AUTH_TOKEN"
    assert to_sentry.read_status(directory) is None
    assert to_sentry.report(settings, bundles) == to_sentry.STAY_LOCAL


def test_local_mode_uploads_nothing_and_says_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="reflex_lookout.sourcemaps")
    bundles = tmp_path / "bundles"
    directory = saved(tmp_path, bundles)
    settings = lookout_uploads({"SENTRY_AUTH_TOKEN": "f" * 64, "SENTRY_ORG": "o", "SENTRY_PROJECT": "2"})

    assert to_sentry.after_build(directory, settings, SENTRY_CLI) is None
    assert to_sentry.retry_pending(bundles, settings, SENTRY_CLI) == []
    assert to_sentry.report(settings, bundles) == ""
    assert [r for r in caplog.records if r.name == to_sentry.__name__] == []
    assert to_sentry.read_status(directory) is None


def test_the_start_retries_the_newest_bundles_first_and_only_those_kept(tmp_path: Path) -> None:
    need_tools()
    bundles = tmp_path / "bundles"
    made = [saved(tmp_path / str(n), bundles, f"export const v{n} = {n};\n") for n in range(3)]
    settings = lookout_uploads({"SENTRY_DSN": "http://key@127.0.0.1/2", "SENTRY_AUTH_TOKEN": "f" * 64,
                                  "SENTRY_ORG": "o", "SENTRY_PROJECT": "2", "LOOKOUT_SOURCEMAP_BUILDS": "2",
                                  "SENTRY_URL": f"http://127.0.0.1:{free_port()}"})  # down

    uploads = to_sentry.retry_pending(bundles, settings, SENTRY_CLI)

    assert [u.state for u in uploads] == ["failed", "failed"]
    # The newest first; the oldest, past LOOKOUT_SOURCEMAP_BUILDS, not at all.
    assert [to_sentry.read_status(d) for d in made] == [None, uploads[1], uploads[0]]


def test_an_upload_to_another_project_is_made_again(tmp_path: Path) -> None:
    """A bundle uploaded to one Sentry project counts as not uploaded once SENTRY_PROJECT names another."""
    bundles = tmp_path / "bundles"
    directory = saved(tmp_path, bundles)
    env = {"SENTRY_DSN": "http://key@127.0.0.1/2", "SENTRY_AUTH_TOKEN": "f" * 64, "SENTRY_ORG": "o", "SENTRY_PROJECT": "2"}
    first, other = lookout_uploads(env), lookout_uploads({**env, "SENTRY_PROJECT": "3"})
    target = Target.of(first)
    (directory / to_sentry.STATUS).write_text(json.dumps(
        {"state": "ok", "at": 1.0, "url": "", "org": "o", "project": "2", "sentence": "2 chunks and their maps uploaded"}))
    assert to_sentry.pending(bundles, target, 5) == []
    assert to_sentry.pending(bundles, Target.of(other), 5) == [directory]
    assert "not uploaded to Sentry yet" in to_sentry.report(other, bundles)


@pytest.mark.parametrize("text", ["", "{", "[]", '{"state": "ok"}', "x" * (to_sentry.MAX_STATUS_BYTES + 1), "[" * 50_000,
                                  '{"state": "maybe", "at": 1, "url": "", "org": "", "project": "", "sentence": ""}',
                                  '{"state": "ok", "at": "1", "url": "", "org": "", "project": "", "sentence": ""}'])
def test_an_unreadable_status_file_is_no_upload(tmp_path: Path, text: str) -> None:
    (tmp_path / to_sentry.STATUS).write_text(text)
    assert to_sentry.read_status(tmp_path) is None


TOKEN = "secret-token-value"


@pytest.mark.parametrize(("env", "wanted"), [
    ({}, ["SENTRY_AUTH_TOKEN", "SENTRY_ORG", "SENTRY_PROJECT"]),
    ({"SENTRY_AUTH_TOKEN": TOKEN, "SENTRY_PROJECT": "p"}, ["SENTRY_ORG"]),
    ({"SENTRY_AUTH_TOKEN": "sntrys_" + TOKEN, "SENTRY_PROJECT": "p"}, []),  # an org token names its org
    ({"SENTRY_AUTH_TOKEN": TOKEN, "SENTRY_ORG": "o", "SENTRY_PROJECT": "p"}, []),
])
def test_what_an_upload_needs(env: dict[str, str], wanted: list[str]) -> None:
    settings = lookout_uploads(env)
    assert to_sentry.missing(settings) == wanted
    target = Target.of(settings)
    assert (target is None) == bool(wanted)
    assert TOKEN not in repr(settings) and TOKEN not in repr(target)  # what a log line or an error report could show
