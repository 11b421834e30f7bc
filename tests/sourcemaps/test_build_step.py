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

from app.sourcemaps.own_build import SENTRY_CLI
from reflex_lookout.sourcemaps import bundle
from reflex_lookout.sourcemaps.build_step import SourceMapBuildError, SourceMapsPlugin, for_host, hide_source_maps, make_bundle
from reflex_lookout.sourcemaps.upload_settings import UploadSettings
from tests.sourcemaps import real_build
from tests.sourcemaps.fake_bundles import PAGE, ROUTE

DEBUG_ID = re.compile(r"\n//# debugId=([0-9a-f-]{36})\n$")
LIBRARY_ONLY = UploadSettings(wanted=False, url="", org="", project="", token="", keep=5)  # Lookout's local mode


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

    SourceMapsPlugin(SENTRY_CLI, LIBRARY_ONLY, bundles=bundles, for_library=True).post_build(static_dir=static_dir)

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


def test_a_host_app_without_a_token_makes_no_maps(static_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No SENTRY_AUTH_TOKEN: `vite.config.js` keeps Reflex's setting (no maps), nothing is moved or written."""
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web"))
    step = for_host({"SENTRY_URL": "http://127.0.0.1:9", "SENTRY_ORG": "o", "SENTRY_PROJECT": "2"})
    modified: list[object] = []
    before = {p: p.read_bytes() for p in static_dir.rglob("*.*")}

    step.pre_compile(add_modify_task=lambda *task: modified.append(task), unevaluated_pages=[])  # type: ignore[call-arg]
    step.post_build(static_dir=static_dir)

    assert modified == [] and not (tmp_path / "web").exists()
    assert {p: p.read_bytes() for p in static_dir.rglob("*.*")} == before


def test_a_host_app_whose_maps_cannot_be_made_builds_on_without_serving_them(
    static_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """With a token but no sentry-cli: one warning naming what to install, every map out of the
    build, the chunks served as they are; the build does not fail (Lookout's own would)."""
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web"))
    step = for_host({"SENTRY_AUTH_TOKEN": "secret-token", "LOOKOUT_SENTRY_CLI": str(tmp_path / "no-sentry-cli")})
    chunks = {p: p.read_bytes() for p in static_dir.rglob("*.js")}

    step.post_build(static_dir=static_dir)

    assert list(static_dir.rglob("*.map")) == []
    assert {p: p.read_bytes() for p in static_dir.rglob("*.js")} == chunks
    [warning] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "sentry-cli is missing" in warning and "reflex-lookout[sourcemaps]" in warning, warning
    assert "secret-token" not in caplog.text
    with pytest.raises(SourceMapBuildError, match="sentry-cli is missing"):  # Lookout's step stops its build
        SourceMapsPlugin(tmp_path / "no-sentry-cli", LIBRARY_ONLY, bundles=tmp_path / "b", for_library=True).post_build(
            static_dir=_built(tmp_path / "again"))


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


def test_the_production_build_writes_hidden_source_maps_whatever_reflex_set() -> None:
    from reflex_base.compiler.templates import vite_config_template

    from reflex_lookout.browser import add_proxy, add_sentry_flags

    for reflex_setting in (False, True, "inline"):
        generated = vite_config_template(
            base="/", hmr=True, force_full_reload=False, experimental_hmr=False, prod_react=False,
            warmup_routes=False, react_compiler=False, sourcemap=reflex_setting, minify=True, allowed_hosts=False,
        )
        hidden = hide_source_maps(generated)
        assert hidden.count("sourcemap:") == 1 and '\n    sourcemap: "hidden",\n' in hidden
        assert hide_source_maps(hidden) == hidden
        both = add_sentry_flags(add_proxy(hidden, ["/monitoring"], "http://localhost:8000"), debug=False)
        assert hide_source_maps(both) == both  # the edits leave each other alone


def test_template_without_a_build_sourcemap_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="sourcemap"):
        hide_source_maps("export default {}")


def test_vites_preload_helper_chunk_without_a_map_gets_an_empty_one(
        static_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Vite 8 writes no map for the chunk of its preload helper when lazy imports on several pages share
    it (Reflex's charts on two pages): that chunk gets an empty map and the build keeps all the others."""
    helper = static_dir / "assets" / "preload-helper-Ab_d-234.js"
    helper.write_text('const e="modulepreload";export{e as t};\n')
    directory = make_bundle(static_dir, tmp_path / "bundles", SENTRY_CLI, keep=1)
    manifest = bundle.read_manifest(directory)
    [entry] = [f for f in manifest.files if f.js.endswith(helper.name)]
    stored = json.loads((directory / entry.map).read_text())
    assert (stored["sources"], stored["mappings"], stored["debugId"]) == ([], "", entry.debug_id)
    assert len(manifest.files) == 3 and all((directory / f.map).exists() for f in manifest.files)
    assert f"Vite wrote no source map for {helper.name}" in caplog.text
    again = _built(tmp_path / "again")
    other = again / "assets" / "vendor-Ab_d-234.js"  # any other chunk without a map still stops the build
    other.write_text("export const v=1;\n")
    with pytest.raises(SourceMapBuildError, match=rf"{re.escape(str(other))} has no source map beside it"):
        make_bundle(again, tmp_path / "bundles-again", SENTRY_CLI, keep=1)
