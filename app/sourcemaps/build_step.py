"""A Reflex plugin that gives every production build's JavaScript a Sentry debug ID and takes its
source maps out of what is served.

Vite writes a hidden map beside each chunk (`build.sourcemap: "hidden"`, app/monitoring/vite_config.py:
no `sourceMappingURL`). After the build, before Reflex writes the precompressed `.gz` files (so they
match), `post_build`:

1. runs the pinned `sentry-cli sourcemaps inject` on the chunks (`make setup` installs it under
   `.tools/`): each chunk gets the snippet that registers its debug ID at run time, so browser events
   carry `debug_meta.images`, and a `//# debugId=` comment; its map gets the same `debugId`;
2. checks that every chunk has a map and a debug ID, equal in both, and that no chunk names its map
   (React Router's route manifest, `manifest-<hash>.js`, is data, not code: it has no map, and is
   left as it is);
3. moves every map, with a copy of each chunk and a manifest, into a bundle directory that is not
   served (bundle.py), and keeps only the newest LOOKOUT_SOURCEMAP_BUILDS bundles there. The backend
   imports them into the database when it starts (library.py);
4. in Sentry mode, uploads the bundle to Sentry (to_sentry.py), which never fails the build.

`pre_compile` records the Python page of each generated route module (pages.py) for the manifest:
it runs in the process that compiles, which is not always the one that builds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from reflex_base.plugins.base import Plugin, PostBuildContext, PreCompileContext
from typing_extensions import Unpack

from app.settings import SETTINGS
from app.sourcemaps import bundle, pages, to_sentry
from app.sourcemaps.bundle import BundleError, BundleFile, Manifest

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent.parent
SENTRY_CLI = ROOT / ".tools" / "node_modules" / ".bin" / "sentry-cli"
ASSETS = "assets"  # Vite's build.assetsDir: where the chunks are
INJECT_TIMEOUT_S = 300
DEBUG_ID_COMMENT = re.compile(rb"//# debugId=([0-9a-fA-F-]{36})\s*$")
MAP_REFERENCE = re.compile(rb"^//[#@] sourceMappingURL=", re.MULTILINE)
# React Router's route manifest: one assignment of JSON, written by its Vite plugin without a map.
ROUTE_MANIFEST_NAME = re.compile(r"manifest-[0-9a-f]{8}\.js")
ROUTE_MANIFEST_START = b"window.__reactRouterManifest="


class SourceMapBuildError(RuntimeError):
    """The build's source maps are not what symbolication needs; the message says which file and why."""


class SourceMapsPlugin(Plugin):
    def __init__(self, cli: Path = SENTRY_CLI, bundles: Path | None = None, keep: int | None = None) -> None:
        self.cli = cli
        self.bundles = bundles
        self.keep = keep if keep is not None else SETTINGS.sourcemap_builds

    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        bundle.write_pages(self.bundles or bundle.root(), pages.sources_of(context["unevaluated_pages"]))

    def post_build(self, **context: Unpack[PostBuildContext]) -> None:
        from reflex_base.config import get_config

        prefix = get_config().frontend_path.strip("/")
        directory = make_bundle(context["static_dir"], self.bundles or bundle.root(), self.cli, self.keep, prefix)
        logger.info("source maps of this build kept in %s", directory)
        to_sentry.after_build(directory, cli=self.cli)  # Sentry mode; never fails the build


def make_bundle(static_dir: Path, bundles: Path, cli: Path, keep: int, url_prefix: str = "") -> Path:
    """Inject debug IDs into the chunks under `static_dir`, move their maps to a new bundle under
    `bundles`, prune the bundles to the newest `keep`; returns the new bundle's directory."""
    chunks, data = _chunks(static_dir / ASSETS)
    inject(cli, static_dir / ASSETS, ignore=[path.name for path in data])
    files = tuple(_describe(chunk, static_dir, url_prefix) for chunk in chunks)
    build_id = hashlib.sha256("".join(f"{f.asset_path} {f.sha256}\n" for f in files).encode()).hexdigest()[:20]
    found = bundle.read_pages(bundles)
    if found is None:
        logger.warning("no page map from the compile in %s: frames will not name their Python page", bundles)
    manifest = Manifest(build_id, time.time(), files, found or {})
    directory = _store(static_dir, bundles, manifest)
    prune(bundles, keep)
    return directory


def _chunks(assets: Path) -> tuple[list[Path], list[Path]]:
    """The build's chunks, each checked to have a hidden map beside it; and its route manifests."""
    found = sorted(assets.rglob("*.js")) if assets.is_dir() else []
    data = [path for path in found if _is_route_manifest(path)]
    chunks = [path for path in found if path not in data]
    if not chunks:
        raise SourceMapBuildError(f"The build has no JavaScript under {assets}.")
    for chunk in chunks:
        if not _map_of(chunk).is_file():
            raise SourceMapBuildError(
                f"{chunk} has no source map beside it ({_map_of(chunk).name}): the build must emit one per chunk "
                "(build.sourcemap in vite.config.js, set by app/monitoring/vite_config.py)."
            )
        if MAP_REFERENCE.search(_read(chunk)):
            raise SourceMapBuildError(f"{chunk} names its source map (sourceMappingURL): maps must stay hidden "
                                      '(build.sourcemap: "hidden" in vite.config.js).')
    return chunks, data


def _is_route_manifest(path: Path) -> bool:
    if not ROUTE_MANIFEST_NAME.fullmatch(path.name) or _map_of(path).exists():
        return False
    with path.open("rb") as file:
        return file.read(len(ROUTE_MANIFEST_START)) == ROUTE_MANIFEST_START


def _map_of(chunk: Path) -> Path:
    return chunk.with_name(chunk.name + ".map")


def inject(cli: Path, directory: Path, ignore: list[str]) -> None:
    """`sentry-cli sourcemaps inject <directory>`: debug IDs into the chunks and their maps, except
    the files named in `ignore`."""
    if not os.access(cli, os.X_OK):
        raise SourceMapBuildError(f"sentry-cli is missing ({cli} is not an executable): run `make setup`.")
    env = {**os.environ, "SENTRY_DISABLE_UPDATE_CHECK": "true"}
    try:
        ignored = [argument for name in ignore for argument in ("--ignore", name)]
        done = subprocess.run([str(cli), "sourcemaps", "inject", *ignored, str(directory)], capture_output=True,
                              env=env, timeout=INJECT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SourceMapBuildError(f"sentry-cli sourcemaps inject did not run ({exc}).") from None
    if done.returncode != 0:
        output = (done.stderr or done.stdout).decode("utf-8", "replace").strip()[-2000:]
        raise SourceMapBuildError(f"sentry-cli sourcemaps inject failed (exit {done.returncode}): {output}")


def _describe(chunk: Path, static_dir: Path, url_prefix: str) -> BundleFile:
    source = _read(chunk)
    comment = DEBUG_ID_COMMENT.search(source[-200:])
    if comment is None:
        raise SourceMapBuildError(f"{chunk} has no debug ID after sentry-cli sourcemaps inject.")
    debug_id = comment.group(1).decode().lower()
    try:
        map_id = json.loads(_read(_map_of(chunk))).get("debugId")
    except (ValueError, AttributeError) as exc:
        raise SourceMapBuildError(f"{_map_of(chunk)} is not a JSON source map ({exc}).") from None
    if not isinstance(map_id, str) or map_id.lower() != debug_id:
        raise SourceMapBuildError(f"{_map_of(chunk)} has debugId {map_id!r}, its chunk {debug_id}.")
    relative = chunk.relative_to(static_dir).as_posix()
    asset_path = "/" + "/".join(part for part in (url_prefix, relative) if part)
    return BundleFile(debug_id, asset_path, hashlib.sha256(source).hexdigest(), relative, relative + ".map")


def _read(path: Path) -> bytes:
    try:
        return bundle.read_file(path)
    except BundleError as exc:
        raise SourceMapBuildError(str(exc)) from None


def _store(static_dir: Path, bundles: Path, manifest: Manifest) -> Path:
    """Write the bundle beside the others (atomically: a directory renamed into place), taking every
    map out of `static_dir`."""
    incoming = bundles / f".incoming-{manifest.build_id}-{os.getpid()}"
    shutil.rmtree(incoming, ignore_errors=True)
    for file in manifest.files:
        (incoming / file.js).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(static_dir / file.js, incoming / file.js)
    for map_file in sorted(static_dir.rglob("*.map")):  # the chunks' and any other (CSS) map
        target = incoming / map_file.relative_to(static_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(map_file, target)
    (incoming / bundle.MANIFEST).write_text(manifest.to_json(), "utf-8")
    final = bundles / manifest.build_id
    shutil.rmtree(final, ignore_errors=True)  # the same build again
    incoming.rename(final)
    return final


def prune(bundles: Path, keep: int) -> None:
    """Keep the newest `keep` bundles; remove older ones, unreadable ones and unfinished writes."""
    kept = {path for path, _ in bundle.present(bundles)[:keep]}
    for child in bundles.iterdir():
        ours = bundle.BUILD_ID.fullmatch(child.name) or child.name.startswith(".incoming-")
        if child.is_dir() and ours and child not in kept:
            shutil.rmtree(child, ignore_errors=True)
