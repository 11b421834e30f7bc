"""A build's source maps on disk, outside what is served: `.web/lookout-sourcemaps/<build_id>/`.

The build step (build_step.py) writes one directory per production build; the backend imports them
into the database at start (library.py). Layout of a bundle, paths as in the served directory:

    manifest.json               build_id, created_at, pages, and per JavaScript chunk: debug_id,
                                asset_path (URL path), sha256 of the served file, js and map (paths here)
    assets/<chunk>.js           the chunk as served (with its debug ID)
    assets/<chunk>.js.map       its source map (with `debugId`)

`pages.json` beside the bundles is the Python page map of the last compile (pages.py), written at
compile time and read by the build step.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

from reflex_lookout.protocol.envelope import STRICT_JSON
from reflex_lookout.sourcemaps import pages
from reflex_lookout.sourcemaps.pages import PageSource

logger = logging.getLogger(__name__)

DIRECTORY = "lookout-sourcemaps"  # under Reflex's web directory, which prod does not serve
MANIFEST = "manifest.json"
PAGES = "pages.json"
FORMAT = 1
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_FILE_BYTES = 64 * 1024 * 1024  # per chunk and per map, at build and at import
BUILD_ID = re.compile(r"[0-9a-f]{16,64}")
DEBUG_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")  # as stored


class BundleError(Exception):
    """A bundle directory that cannot be used; the message says which and why."""


@dataclass(frozen=True)
class BundleFile:
    debug_id: str
    asset_path: str
    sha256: str
    js: str  # relative to the bundle directory
    map: str


@dataclass(frozen=True)
class Manifest:
    build_id: str
    created_at: float
    files: tuple[BundleFile, ...]
    pages: dict[str, PageSource] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({
            "format": FORMAT,
            "build_id": self.build_id,
            "created_at": self.created_at,
            "pages": pages.to_json(self.pages),
            "files": [vars(f) for f in self.files],
        }, indent=1)


def root() -> Path:
    """Where the bundles are: beside Reflex's build, in its web directory (REFLEX_WEB_WORKDIR)."""
    from reflex.utils.prerequisites import get_web_dir

    return Path(get_web_dir()).absolute() / DIRECTORY


def inside(directory: Path, relative: str) -> Path:
    """`directory / relative`, refused when it would leave `directory`."""
    path = (directory / relative).resolve()
    if not path.is_relative_to(directory.resolve()):
        raise BundleError(f"{directory / MANIFEST} names {relative!r}, outside its bundle.")
    return path


def read_file(path: Path) -> bytes:
    """A chunk or map, refused when larger than MAX_FILE_BYTES."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise BundleError(f"{path} is {size} bytes, more than {MAX_FILE_BYTES}.")
    return path.read_bytes()


def read_manifest(directory: Path) -> Manifest:
    path = directory / MANIFEST
    value = _read_json(path)
    if not isinstance(value, dict) or value.get("format") != FORMAT:
        raise BundleError(f"{path} is not a format-{FORMAT} manifest.")
    build_id, created_at, files = value.get("build_id"), value.get("created_at"), value.get("files")
    if not isinstance(build_id, str) or not BUILD_ID.fullmatch(build_id):
        raise BundleError(f"{path} has no valid build_id.")
    # A number, not a boolean (JSON's true is an int to isinstance).
    if isinstance(created_at, bool) or not isinstance(created_at, int | float) or not isinstance(files, list):
        raise BundleError(f"{path} has no created_at or no list of files.")
    return Manifest(build_id, float(created_at), tuple(_file(entry, path) for entry in files),
                    pages.from_json(value.get("pages")))


def _file(entry: object, path: Path) -> BundleFile:
    names = ("debug_id", "asset_path", "sha256", "js", "map")
    if not isinstance(entry, dict) or not all(isinstance(entry.get(name), str) for name in names):
        raise BundleError(f"{path} has a file entry without {', '.join(names)}.")
    found = BundleFile(*(entry[name] for name in names))
    if not DEBUG_ID.fullmatch(found.debug_id) or not found.asset_path.startswith("/"):
        raise BundleError(f"{path} has a file entry with a bad debug_id or asset_path: {found.js!r}.")
    return found


def present(directory: Path) -> list[tuple[Path, Manifest]]:
    """The bundles under `directory`, newest first; an unreadable one is logged and left out."""
    found: list[tuple[Path, Manifest]] = []
    if not directory.is_dir():
        return found
    for child in directory.iterdir():
        if not child.is_dir() or not BUILD_ID.fullmatch(child.name):
            continue
        try:
            found.append((child, read_manifest(child)))
        except BundleError as exc:
            logger.warning("source map bundle left out: %s", exc)
    return sorted(found, key=lambda item: (item[1].created_at, item[1].build_id), reverse=True)


def write_pages(directory: Path, sources: dict[str, PageSource]) -> None:
    """Keep the page map of this compile for the build step (rewritten only when it changed: the
    dev server reloads the page when a file under the web directory changes)."""
    text = json.dumps(pages.to_json(sources), indent=1)
    path = directory / PAGES
    if not path.exists() or path.read_text("utf-8") != text:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")


def read_pages(directory: Path) -> dict[str, PageSource] | None:
    """The page map of the last compile, or None when there is none."""
    try:
        return pages.from_json(_read_json(directory / PAGES))
    except BundleError:
        return None


def _read_json(path: Path) -> object:
    try:
        size = path.stat().st_size
        if size > MAX_MANIFEST_BYTES:
            raise BundleError(f"{path} is {size} bytes, more than {MAX_MANIFEST_BYTES}.")
        return STRICT_JSON.decode(path.read_text("utf-8"))  # written by the build step; read with care all the same
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise BundleError(f"{path} cannot be read ({exc}).") from None
