"""Original source paths, project-relative whatever directory a build ran in, and the in-app rule."""

from __future__ import annotations

import pytest

from app.sourcemaps.source_paths import in_app, is_in_app, project_path

PROD_ASSET = "/assets/_try_._index-Bsn8sjMY.js"  # served from .web/build/client


@pytest.mark.parametrize(("source", "asset", "build", "expected"), [
    # Vite's production maps name sources relative to the map, in .web/build/client/assets/
    ("../../../app/routes/[try]._index.jsx", PROD_ASSET, "b1", ".web/app/routes/[try]._index.jsx"),
    ("../../../app/routes/%5Btry%5D._index.jsx", PROD_ASSET, "b1", ".web/app/routes/[try]._index.jsx"),  # esbuild's
    ("../../../node_modules/react-dom/cjs/react-dom.production.js", PROD_ASSET, "b1",
     ".web/node_modules/react-dom/cjs/react-dom.production.js"),
    ("../../../utils/./state.js", PROD_ASSET, "b1", ".web/utils/state.js"),
    ("../../../../assets/custom.js", PROD_ASSET, "b1", "assets/custom.js"),  # the project's own folder
    ("../../../../../../elsewhere/lib.js", PROD_ASSET, "b1", "elsewhere/lib.js"),  # out of the project: the part within
    # the dev server serves .web itself, and names sources relative to the module's directory
    ("[try]._index.jsx", "/app/routes/[try]._index.jsx", "dev", ".web/app/routes/[try]._index.jsx"),
    ("/app/routes/[try]._index.jsx", "/app/routes/[try]._index.jsx", "dev", ".web/app/routes/[try]._index.jsx"),
    ("../../react/index.js", "/node_modules/.vite/deps/react.js", "dev", ".web/node_modules/react/index.js"),
    # absolute paths of whatever machine built it: cut at .web (the last), or at node_modules
    ("/tmp/x/.web/app/routes/_index.jsx", PROD_ASSET, "b1", ".web/app/routes/_index.jsx"),
    ("/home/ci/.web/work/.web/app/root.jsx", PROD_ASSET, "b1", ".web/app/root.jsx"),
    ("file:///work/main/.web/utils/state.js", PROD_ASSET, "b1", ".web/utils/state.js"),
    ("C:\\build\\.web\\app\\routes\\_index.jsx", PROD_ASSET, "b1", ".web/app/routes/_index.jsx"),
    ("/opt/cache/node_modules/react/index.js", PROD_ASSET, "b1", ".web/node_modules/react/index.js"),
])
def test_a_source_is_named_by_its_place_in_the_project(source: str, asset: str, build: str, expected: str) -> None:
    assert project_path(source, asset, build) == expected


def test_the_build_directory_never_shows() -> None:
    built_here = project_path("/work/main/.web/app/routes/_index.jsx", PROD_ASSET, "b1")
    built_there = project_path("/tmp/x/.web/app/routes/_index.jsx", PROD_ASSET, "b2")
    assert built_here == built_there == project_path("../../../app/routes/_index.jsx", PROD_ASSET, "b3")


def test_a_huge_source_name_is_cut() -> None:
    assert len(project_path("a/" * 10_000 + "x.js", PROD_ASSET, "b1")) <= 1024


@pytest.mark.parametrize(("path", "in_app"), [
    (".web/app/routes/[try]._index.jsx", True),
    (".web/app_components/app/pages/try_errors.jsx", True),
    (".web/utils/components/Errorboundary_errorboundary_58d5.jsx", True),
    (".web/public/custom.js", True),
    ("assets/custom.js", True),
    (".web/app_components/reflex/app.jsx", False),
    (".web/utils/state.js", False),
    (".web/utils/helpers/debounce.js", False),
    (".web/app/root.jsx", False),
    (".web/app/entry.client.js", False),
    (".web/app/lookout_sdk.js", False),
    (".web/app/lookout_loader.js", False),
    (".web/components/reflex/radix_themes_color_mode_provider.js", False),
    (".web/node_modules/react-dom/index.js", False),
    (".web/app/routes/node_modules/x.js", False),
    ("app/monitoring/browser.js", False),
    ("elsewhere/lib.js", False),
])
def test_the_apps_own_code_is_in_app_and_the_runtime_libraries_and_monitoring_are_not(path: str, in_app: bool) -> None:
    assert is_in_app(path) is in_app


UPLOAD = "upload-2-" + "a" * 40  # another app's bundle, uploaded with sentry-cli (app/sourcemaps/uploads.py)


@pytest.mark.parametrize(("source", "asset", "expected"), [
    # relative to the map, from the URL path it is served at; nothing of Lookout's layout
    ("../../src/util.js", "/assets/main.js", "src/util.js"),
    ("../src/app.tsx", "/static/js/app.js", "static/src/app.tsx"),
    ("../../node_modules/react/index.js", "/assets/main.js", "node_modules/react/index.js"),
    ("webpack://billing/./src/index.ts", "/main.js", "src/index.ts"),
    ("webpack://billing/webpack/runtime/define property getters", "/main.js", "webpack/runtime/define property getters"),
    ("/home/ci/billing/.web/src/a.js", "/main.js", "home/ci/billing/.web/src/a.js"),  # .web is nothing special
    ("/home/ci/billing/node_modules/lib/a.js", "/main.js", "node_modules/lib/a.js"),
])
def test_an_uploaded_maps_sources_are_named_without_lookouts_layout(source: str, asset: str, expected: str) -> None:
    assert project_path(source, asset, UPLOAD) == expected


@pytest.mark.parametrize(("path", "expected"), [
    ("src/util.js", True),
    ("utils/state.js", True),  # Lookout's runtime, but not this app's
    ("node_modules/react/index.js", False),
    ("packages/ui/node_modules/lib/a.js", False),
    ("webpack/runtime/define property getters", False),
    ("webpack/bootstrap", False),
])
def test_an_uploaded_maps_code_is_in_app_unless_a_library_or_webpacks_runtime(path: str, expected: bool) -> None:
    assert in_app(path, UPLOAD) is expected
    assert in_app(".web/app/routes/_index.jsx", "b1") and not in_app(".web/utils/state.js", "b1")
