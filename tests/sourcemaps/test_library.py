"""The source-map library on SQLite and PostgreSQL (`database_url`): bundles imported once however
often and however concurrently, only the newest builds kept, maps found by debug ID and by asset
path, bad files refused one by one."""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import func, select

from app import db
from app.projects.registry import Projects
from app.settings import LOCAL_PROJECT_ID
from app.sourcemaps import own_build
from app.sourcemaps.library import MapLibrary, import_bundle, import_present
from app.sourcemaps.tables import BUILDS, FILES
from app.sourcemaps.tokens import Tokens
from plugin_support.concurrency import all_at_once
from reflex_lookout.sourcemaps import bundle
from reflex_lookout.sourcemaps.build_step import make_bundle
from tests.sourcemaps import fake_bundles, real_build
from tests.sourcemaps.artifact_zips import js_file, uploaded
from tests.sourcemaps.fake_bundles import PAGE, ROUTE


@pytest.fixture
def engine(database_url: str) -> sqlalchemy.Engine:
    eng = db.engine(database_url)
    db.migrate(eng)
    return eng


def counts(engine: sqlalchemy.Engine) -> tuple[int, int]:
    with engine.connect() as connection:
        return (connection.execute(select(func.count()).select_from(BUILDS)).scalar_one(),
                connection.execute(select(func.count()).select_from(FILES)).scalar_one())


def test_a_real_build_is_imported_once_and_found_by_debug_id_and_asset_path(
    engine: sqlalchemy.Engine, tmp_path: Path
) -> None:
    static_dir = tmp_path / "client"
    real_build.build(static_dir, tmp_path / "src")
    bundle.write_pages(tmp_path / "bundles", {ROUTE: PAGE})
    directory = make_bundle(static_dir, tmp_path / "bundles", own_build.SENTRY_CLI, keep=5)
    manifest = bundle.read_manifest(directory)

    assert import_bundle(engine, directory) == import_bundle(engine, directory) == manifest.build_id
    assert counts(engine) == (1, 2)
    maps = MapLibrary(engine)
    for file in manifest.files:
        served = (static_dir / file.js).read_bytes()
        found = maps.by_debug_id(file.debug_id)
        assert found is not None and found == maps.by_asset_path(file.asset_path)
        assert (found.debug_id, found.asset_path, found.build_id) == (file.debug_id, file.asset_path, manifest.build_id)
        assert found.source == served
        assert json.loads(found.sourcemap)["debugId"] == file.debug_id
        assert found.pages == {ROUTE: PAGE}
        assert maps.by_debug_id(file.debug_id.upper().replace("-", "")) == found  # as some SDKs spell it


def test_unknown_or_malformed_keys_find_nothing(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    import_bundle(engine, fake_bundles.bundle_of(tmp_path, 1))
    maps = MapLibrary(engine)
    assert maps.by_debug_id(str(uuid.uuid4())) is None
    assert maps.by_debug_id("not a debug id") is None
    assert maps.by_debug_id("0" * 10_000) is None
    assert maps.by_asset_path("/assets/b.js") is None
    assert maps.by_asset_path("assets/a.js") is None  # a URL path starts with /
    assert maps.by_asset_path("/" + "a" * 10_000) is None


def test_an_asset_path_finds_the_newest_build_having_it(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    import_bundle(engine, fake_bundles.bundle_of(tmp_path, 2, ("/assets/a.js", "/assets/b.js")))
    import_bundle(engine, fake_bundles.bundle_of(tmp_path, 3, ("/assets/a.js",)))
    import_bundle(engine, fake_bundles.bundle_of(tmp_path, 1, ("/assets/a.js", "/assets/b.js")))  # built before both
    maps = MapLibrary(engine)
    assert maps.by_asset_path("/assets/a.js").build_id == f"{3:020x}"
    assert maps.by_asset_path("/assets/b.js").build_id == f"{2:020x}"


def test_only_the_newest_builds_are_kept_with_their_files(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    for number in range(1, 22):
        import_bundle(engine, fake_bundles.bundle_of(tmp_path, number), keep=20)
    assert counts(engine) == (20, 20)
    maps = MapLibrary(engine)
    assert maps.by_debug_id(str(uuid.UUID(int=100))) is None  # build 1's file
    assert maps.by_debug_id(str(uuid.UUID(int=200))).build_id == f"{2:020x}"
    import_bundle(engine, fake_bundles.bundle_of(tmp_path, 1), keep=20)  # older than all kept: not imported again
    assert counts(engine) == (20, 20) and maps.by_debug_id(str(uuid.UUID(int=100))) is None


def test_workers_importing_at_once_import_once(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    directory = fake_bundles.bundle_of(tmp_path, 7, tuple(f"/assets/{n}.js" for n in range(20)))
    assert all_at_once(lambda: import_bundle(engine, directory)) == []
    assert counts(engine) == (1, 20)


def test_a_bad_file_is_refused_and_the_rest_imported(
    engine: sqlalchemy.Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    directory = fake_bundles.bundle_of(tmp_path, 1, ("/assets/a.js", "/assets/big.js", "/assets/changed.js", "/assets/gone.js"))
    (directory / "assets" / "big.js.map").write_bytes(b"x" * 2048)
    (directory / "assets" / "changed.js").write_text("something else")
    (directory / "assets" / "gone.js.map").unlink()
    monkeypatch.setattr(bundle, "MAX_FILE_BYTES", 1024)
    with caplog.at_level(logging.WARNING, logger="app.sourcemaps.library"):
        import_bundle(engine, directory)
    assert counts(engine) == (1, 1)
    assert MapLibrary(engine).by_asset_path("/assets/a.js") is not None
    refused = "\n".join(caplog.messages)
    assert "/assets/big.js refused" in refused and "more than 1024" in refused
    assert "/assets/changed.js refused" in refused and "not the file the build served" in refused
    assert "/assets/gone.js refused" in refused


def test_a_manifest_naming_files_outside_its_bundle_is_refused(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    directory = fake_bundles.bundle_of(tmp_path / "bundles", 1)
    (tmp_path / "secret").write_text("not a map")
    manifest = json.loads((directory / bundle.MANIFEST).read_text())
    manifest["files"][0]["map"] = "../../secret"
    (directory / bundle.MANIFEST).write_text(json.dumps(manifest))
    import_bundle(engine, directory)
    assert counts(engine) == (1, 0)


def test_the_bundles_present_are_imported_newest_first_and_a_bad_one_skipped(
    engine: sqlalchemy.Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    bundles = tmp_path / "bundles"
    for number in (1, 2, 3):
        fake_bundles.bundle_of(bundles, number)
    (bundles / f"{9:020x}").mkdir()
    (bundles / f"{9:020x}" / bundle.MANIFEST).write_text("{not json")
    with caplog.at_level(logging.WARNING):
        assert import_present(engine, bundles, keep=2) == [f"{3:020x}", f"{2:020x}"]
    assert f"{9:020x}" in caplog.text
    assert counts(engine) == (2, 2)
    assert import_present(engine, tmp_path / "never-built", keep=2) == []


def test_uploads_are_found_by_debug_id_for_their_project_only_never_by_path_and_never_pruned(
    engine: sqlalchemy.Engine, tmp_path: Path
) -> None:
    Projects(engine).local_dsn()
    billing = Projects(engine).add("Billing").id
    theirs, ours = js_file("a.js"), js_file("local.js")  # theirs is served at /assets/a.js, as build 3's file
    uploaded(engine, Tokens(engine).add(billing)[0], theirs)
    uploaded(engine, Tokens(engine).add(LOCAL_PROJECT_ID)[0], ours)  # uploaded to the app's own project
    for number in (1, 2, 3):
        import_bundle(engine, fake_bundles.bundle_of(tmp_path, number), keep=2)
    assert counts(engine) == (2 + 2, 2 + 2)  # the app's two newest builds, and both uploads
    maps = MapLibrary(engine)
    found = maps.by_debug_id(theirs.debug_id, billing)
    assert found is not None and (found.asset_path, found.source) == ("/assets/a.js", theirs.source)
    assert maps.by_debug_id(theirs.debug_id, LOCAL_PROJECT_ID) is None and maps.by_debug_id(theirs.debug_id, 3) is None
    assert maps.by_debug_id(ours.debug_id, LOCAL_PROJECT_ID) is not None and maps.by_debug_id(ours.debug_id, billing) is None
    own_file = str(uuid.UUID(int=300))  # build 3's: the app's own maps are the app's project's only
    assert maps.by_debug_id(own_file).build_id == maps.by_debug_id(own_file, LOCAL_PROJECT_ID).build_id == f"{3:020x}"
    assert maps.by_debug_id(own_file, billing) is None
    assert maps.by_asset_path("/assets/a.js").build_id == f"{3:020x}"  # never the (newer) upload's
