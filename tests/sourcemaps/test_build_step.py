"""The build step on a real build (esbuild, tests/sourcemaps/real_build.py) with the real pinned
sentry-cli: debug IDs injected, maps out of the served directory into a bundle with its manifest,
only the newest bundles kept, and a clear error for each way a build cannot be kept."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from app.sourcemaps import bundle
from app.sourcemaps.build_step import SourceMapBuildError, SourceMapsPlugin, make_bundle
from tests.sourcemaps import real_build
from tests.sourcemaps.fake_bundles import PAGE, ROUTE
from tests.sourcemaps.real_build import SENTRY_CLI

DEBUG_ID = re.compile(r"\n//# debugId=([0-9a-f-]{36})\n$")


@pytest.fixture
def static_dir(tmp_path: Path) -> Path:
    real_build.build(tmp_path / "client", tmp_path / "src")
    return tmp_path / "client"


def test_post_build_injects_debug_ids_and_moves_every_map_into_a_bundle(static_dir: Path, tmp_path: Path) -> None:
    bundles = tmp_path / "bundles"
    bundle.write_pages(bundles, {ROUTE: PAGE})
    (static_dir / "assets" / "style.css.map").write_text("{}")  # any other map leaves too
    route_manifest = static_dir / "assets" / "manifest-0123abcd.js"  # React Router's data, no map
    route_manifest.write_text('window.__reactRouterManifest={"routes":{}};')

    SourceMapsPlugin(bundles=bundles, keep=5).post_build(static_dir=static_dir)

    assert sorted(p.name for p in static_dir.rglob("*.map")) == []
    assert route_manifest.read_text() == 'window.__reactRouterManifest={"routes":{}};'
    served = {f"/{p.relative_to(static_dir).as_posix()}": p.read_bytes()
              for p in static_dir.rglob("*.js") if p != route_manifest}
    assert len(served) == 2 and all(DEBUG_ID.search(js.decode()) for js in served.values())
    assert not any(b"sourceMappingURL" in js for js in served.values())
    [directory] = [p for p in bundles.iterdir() if p.is_dir()]
    manifest = bundle.read_manifest(directory)
    assert directory.name == manifest.build_id
    assert manifest.pages == {ROUTE: PAGE}
    assert {f.asset_path for f in manifest.files} == set(served)
    for file in manifest.files:
        js = served[file.asset_path]
        assert file.sha256 == hashlib.sha256(js).hexdigest()
        assert (directory / file.js).read_bytes() == js  # the copy symbolication reads beside the map
        assert DEBUG_ID.search(js.decode()).group(1) == file.debug_id
        assert json.loads((directory / file.map).read_text())["debugId"] == file.debug_id
    assert (directory / "assets" / "style.css.map").exists()


def test_the_same_build_twice_is_one_bundle_and_a_changed_one_another(tmp_path: Path) -> None:
    bundles = tmp_path / "bundles"
    first = make_bundle(_built(tmp_path / "a"), bundles, SENTRY_CLI, keep=5)
    shutil.rmtree(tmp_path / "a")
    again = make_bundle(_built(tmp_path / "a"), bundles, SENTRY_CLI, keep=5)
    shutil.rmtree(tmp_path / "a")
    changed = make_bundle(_built(tmp_path / "a", "export const extra = 1;\n"), bundles, SENTRY_CLI, keep=5)
    assert first == again != changed
    assert sorted(p.name for p in bundles.iterdir() if p.is_dir()) == sorted({first.name, changed.name})


def test_only_the_newest_bundles_are_kept(tmp_path: Path) -> None:
    bundles = tmp_path / "bundles"
    made = [make_bundle(_built(tmp_path / str(n), f"export const v{n} = {n};\n"), bundles, SENTRY_CLI, keep=2)
            for n in range(3)]
    assert sorted(p.name for p in bundles.iterdir() if p.is_dir()) == sorted(p.name for p in made[1:])
    (bundles / f"{'0' * 20}").mkdir()  # a bundle without a manifest goes too
    (bundles / ".incoming-x-1").mkdir()  # an interrupted write
    made.append(make_bundle(_built(tmp_path / "3", "export const v3 = 3;\n"), bundles, SENTRY_CLI, keep=2))
    assert [path for path, _ in bundle.present(bundles)] == [made[3], made[2]]
    assert sorted(p.name for p in bundles.iterdir() if p.is_dir()) == sorted(p.name for p in made[2:])


def test_asset_paths_carry_the_frontend_path(static_dir: Path, tmp_path: Path) -> None:
    directory = make_bundle(static_dir, tmp_path / "bundles", SENTRY_CLI, keep=1, url_prefix="console")
    assert all(f.asset_path.startswith("/console/assets/") for f in bundle.read_manifest(directory).files)


def test_a_missing_sentry_cli_stops_the_build_and_changes_nothing(static_dir: Path, tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in static_dir.rglob("*.*")}
    with pytest.raises(SourceMapBuildError, match=r"sentry-cli is missing .*make setup"):
        make_bundle(static_dir, tmp_path / "bundles", tmp_path / "no-sentry-cli", keep=1)
    assert {p: p.read_bytes() for p in static_dir.rglob("*.*")} == before


def test_a_chunk_without_a_map_is_named(static_dir: Path, tmp_path: Path) -> None:
    chunk = sorted((static_dir / "assets").glob("lazy-*.js"))[0]
    Path(f"{chunk}.map").unlink()
    with pytest.raises(SourceMapBuildError, match=rf"{re.escape(str(chunk))} has no source map beside it"):
        make_bundle(static_dir, tmp_path / "bundles", SENTRY_CLI, keep=1)
    assert b"debugId" not in chunk.read_bytes()


def test_a_chunk_naming_its_map_is_refused(static_dir: Path, tmp_path: Path) -> None:
    chunk = sorted((static_dir / "assets").glob("main-*.js"))[0]
    chunk.write_text(chunk.read_text() + f"//# sourceMappingURL={chunk.name}.map\n")
    with pytest.raises(SourceMapBuildError, match=r"names its source map"):
        make_bundle(static_dir, tmp_path / "bundles", SENTRY_CLI, keep=1)


def test_a_build_without_chunks_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SourceMapBuildError, match="no JavaScript"):
        make_bundle(tmp_path, tmp_path / "bundles", SENTRY_CLI, keep=1)


def _built(work: Path, extra: str = "") -> Path:
    real_build.build(work / "client", work / "src", extra)
    return work / "client"
