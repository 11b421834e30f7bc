"""A Reflex plugin that gives every production build's JavaScript a Sentry debug ID and takes its
source maps out of what is served.

`pre_compile` sets Vite's `build.sourcemap: "hidden"` in `vite.config.js` (Reflex's default is no maps,
VITE_SOURCEMAP): a map beside each chunk, no `sourceMappingURL` in it. After the build, before Reflex
writes the precompressed `.gz` files (so they match), `post_build`:

1. runs the pinned `sentry-cli sourcemaps inject` on the chunks (upload_settings.py says which
   binary): each chunk gets the snippet that registers its debug ID at run time, so browser events
   carry `debug_meta.images`, and a `//# debugId=` comment; its map gets the same `debugId`;
2. checks that every chunk has a map and a debug ID, equal in both, and that no chunk names its map
   (React Router's route manifest, `manifest-<hash>.js`, is data, not code: it has no map, and is
   left as it is; the chunk of Vite's preload helper, which Vite 8 may write without a map, gets an
   empty one, with a warning, rather than costing the build all its maps);
3. moves every map, with a copy of each chunk and a manifest, into a bundle directory that is not
   served (bundle.py), and keeps only the newest `keep` bundles there (Lookout, the app this plugin
   comes from, imports them into its database when its backend starts);
4. when uploads are wanted, uploads the bundle (to_sentry.py), which never fails the build.

Two uses. A host app (`Monitoring`, `for_library=False`): all of this only with SENTRY_AUTH_TOKEN (no
token, no maps: Reflex's default stays), and a build whose maps cannot be made is logged once, its maps
deleted (never served), and goes on. Lookout, the app this plugin comes from (`for_library=True`): maps on
every build, for its own symbolication, and such a build fails with the sentence.

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
from collections.abc import Mapping
from pathlib import Path

from reflex_base.plugins.base import Plugin, PostBuildContext, PreCompileContext
from typing_extensions import Unpack

from reflex_lookout.sourcemaps import bundle, map_pages, pages, to_sentry
from reflex_lookout.sourcemaps.bundle import BundleError, BundleFile, Manifest
from reflex_lookout.sourcemaps.pages import PageSource
from reflex_lookout.sourcemaps.sentry_cli import missing_cli
from reflex_lookout.sourcemaps.upload_settings import UploadSettings, host_cli

logger = logging.getLogger(__name__)

ASSETS = "assets"  # Vite's build.assetsDir: where the chunks are
INJECT_TIMEOUT_S = 300
DEBUG_ID_COMMENT = re.compile(rb"//# debugId=([0-9a-fA-F-]{36})\s*$")
MAP_REFERENCE = re.compile(rb"^//[#@] sourceMappingURL=", re.MULTILINE)
# React Router's route manifest: one assignment of JSON, written by its Vite plugin without a map.
ROUTE_MANIFEST_NAME = re.compile(r"manifest-[0-9a-f]{8}\.js")
ROUTE_MANIFEST_START = b"window.__reactRouterManifest="
# The chunk Vite 8 puts its preload helper in when lazy imports on several pages share it (Reflex's
# charts: `import('recharts')` per page); Vite writes it without a map even with build.sourcemap set.
PRELOAD_HELPER_NAME = re.compile(r"preload-helper-[A-Za-z0-9_-]{8}\.js")
EMPTY_MAP = {"version": 3, "sources": [], "names": [], "mappings": ""}
BUILD_SOURCEMAP = re.compile(r"^(  build: \{\n(?:    .*\n)*?    sourcemap: ).*,$", re.MULTILINE)


class SourceMapBuildError(RuntimeError):
    """The build's source maps are not what symbolication needs; the message says which file and why."""


class SourceMapsPlugin(Plugin):
    """The build step: `cli` is the sentry-cli to run, `upload` where the maps go (and how many
    bundles stay), `bundles` where they are kept (default `.web/lookout-sourcemaps/`), `root` the app's
    folder (default the working directory: page files are named relative to it)."""

    def __init__(self, cli: Path, upload: UploadSettings, bundles: Path | None = None, root: Path | None = None,
                 for_library: bool = False) -> None:
        self.cli = cli
        self.upload = upload
        self.bundles = bundles
        self.root = root
        self.for_library = for_library

    @property
    def active(self) -> bool:
        """Whether this build makes maps: always for Lookout's library, else only to upload them."""
        return self.for_library or self.upload.wanted

    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        if not self.active:
            return
        from reflex_base.constants import ReactRouter

        context["add_modify_task"](ReactRouter.VITE_CONFIG_FILE, self._hidden)
        try:
            found = pages.sources_of(context["unevaluated_pages"], self.root)
            bundle.write_pages(self.bundles or bundle.root(), found)
        except Exception as exc:  # noqa: BLE001 (a host's compile goes on: its frames just name no Python page)
            if self.for_library:
                raise
            logger.warning("reflex-lookout: the page map of this compile not written (%s): frames will not "
                           "name their Python page.", exc)

    def _hidden(self, config_js: str) -> str:
        """The modify task of `vite.config.js`; for a host, a template it cannot edit is left as it is
        (no maps are made then, and post_build says so)."""
        try:
            return hide_source_maps(config_js)
        except RuntimeError as exc:
            if self.for_library:
                raise
            logger.warning("reflex-lookout: %s", exc)
            return config_js

    def post_build(self, **context: Unpack[PostBuildContext]) -> None:
        if not self.active:
            return
        from reflex_base.config import get_config

        prefix = get_config().frontend_path.strip("/")
        static_dir = context["static_dir"]
        try:
            directory = make_bundle(static_dir, self.bundles or bundle.root(), self.cli, self.upload.keep, prefix)
        except Exception as exc:  # noqa: BLE001 (a host's build goes on, whatever went wrong with its maps)
            if self.for_library:
                raise
            removed = unserve_maps(static_dir)
            logger.warning("reflex-lookout: source maps of this build not made (%s); %d maps deleted from the "
                           "build, nothing uploaded.", exc, removed)
            return
        logger.info("source maps of this build kept in %s", directory)
        to_sentry.after_build(directory, self.upload, self.cli)  # never fails the build


def for_host(environ: Mapping[str, str]) -> SourceMapsPlugin:
    """A host app's build step (`Monitoring`'s): its SENTRY_* variables, the sentry-cli of its environment."""
    return SourceMapsPlugin(host_cli(environ), UploadSettings.from_environ(environ))


def hide_source_maps(config_js: str) -> str:
    """`vite.config.js` whose production build writes hidden source maps (replacing Reflex's setting)."""
    edited, count = BUILD_SOURCEMAP.subn(r'\1"hidden",', config_js, count=1)
    if count != 1:
        raise RuntimeError("vite.config.js has no `sourcemap:` entry in `build: {`; Reflex changed its template.")
    return edited


def unserve_maps(static_dir: Path) -> int:
    """Delete every source map under `static_dir` (a build whose maps cannot be kept must not serve
    them); how many were deleted."""
    found = sorted(static_dir.rglob("*.map"))
    for map_file in found:
        map_file.unlink(missing_ok=True)
    return len(found)


def make_bundle(static_dir: Path, bundles: Path, cli: Path, keep: int, url_prefix: str = "") -> Path:
    """Inject debug IDs into the chunks under `static_dir`, move their maps to a new bundle under
    `bundles`, prune the bundles to the newest `keep`; returns the new bundle's directory."""
    chunks, data = _chunks(static_dir / ASSETS)
    inject(cli, static_dir / ASSETS, ignore=[path.name for path in data])
    found = bundle.read_pages(bundles)
    if found is None:
        logger.warning("no page map from the compile in %s: frames will not name their Python page", bundles)
    files = tuple(_describe(chunk, static_dir, url_prefix, found or {}) for chunk in chunks)
    build_id = hashlib.sha256("".join(f"{f.asset_path} {f.sha256}\n" for f in files).encode()).hexdigest()[:20]
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
        if not _map_of(chunk).is_file() and PRELOAD_HELPER_NAME.fullmatch(chunk.name):
            # Its frames stay as built; the build's other maps are kept (not all refused for one chunk).
            _map_of(chunk).write_text(json.dumps({**EMPTY_MAP, "file": chunk.name}), "utf-8")
            logger.warning("reflex-lookout: Vite wrote no source map for %s (its preload helper's chunk); an empty "
                           "one stands in, so frames in that chunk are not mapped.", chunk.name)
        if not _map_of(chunk).is_file():
            raise SourceMapBuildError(
                f"{chunk} has no source map beside it ({_map_of(chunk).name}): the build must emit one per chunk "
                '(build.sourcemap: "hidden" in vite.config.js, set by pre_compile).'
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
        raise SourceMapBuildError(missing_cli(cli))
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


def _describe(chunk: Path, static_dir: Path, url_prefix: str, found: dict[str, PageSource]) -> BundleFile:
    """The chunk's manifest entry, its map checked to have the chunk's debug ID and written again
    with the pages among its sources (map_pages.py: they travel with an upload)."""
    source = _read(chunk)
    comment = DEBUG_ID_COMMENT.search(source[-200:])
    if comment is None:
        raise SourceMapBuildError(f"{chunk} has no debug ID after sentry-cli sourcemaps inject.")
    debug_id = comment.group(1).decode().lower()
    try:
        sourcemap = json.loads(_read(_map_of(chunk)))
        map_id = sourcemap.get("debugId")
    except (ValueError, AttributeError) as exc:
        raise SourceMapBuildError(f"{_map_of(chunk)} is not a JSON source map ({exc}).") from None
    if not isinstance(map_id, str) or map_id.lower() != debug_id:
        raise SourceMapBuildError(f"{_map_of(chunk)} has debugId {map_id!r}, its chunk {debug_id}.")
    _map_of(chunk).write_bytes(map_pages.with_pages(sourcemap, found))
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
