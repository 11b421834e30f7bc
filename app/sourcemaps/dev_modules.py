"""Dev mode (`reflex run`): the source maps of the modules this app's Vite dev server serves.

In dev the browser runs unminified modules served by Vite (React Router's dev server on Reflex's
frontend port), each ending with its source map inline:
`//# sourceMappingURL=data:application/json;base64,...`. Vite rewrites JSX, so lines shift; with
`DevModules` a dev stack frame names the original file and line, as a prod frame does with the
build's stored maps.

A frame names only a path: the module is read from this app's own dev server
(`http://localhost:<frontend port>`, from Reflex's config), never from a host named in an event.
Another app's dev server is read only for a project that lists its origin (`ModuleReader`, asked by
app/sourcemaps/symbolicate.py; the setting: app/ingest/sourcemap_settings.py), with the same bounds;
its Python pages are the ones its modules declare (app/sourcemaps/declared_pages.py).
Refused without a request: a URL or `//host/...`, a `.`/`..` segment, Vite's internal `/@...` paths
and anything not named like a JavaScript module. Each read: a short deadline (`FETCH_DEADLINE_S`),
at most `MAX_MODULE_BYTES`, no redirects, no proxy from the environment, a JavaScript
`Content-Type`. Answers are not kept here: the symbolicator's cache (app/sourcemaps/map_cache.py)
keeps them by path, found or not, so the frames of one event in one module read it once.

Vite names a dev map's sources relative to the module's own URL directory: `/app/routes/x.jsx`
maps `sources: ["x.jsx"]`.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote, unquote_to_bytes

import httpx

from app.settings import LOCAL_PROJECT_ID
from app.sourcemaps.declared_pages import declared_pages
from app.sourcemaps.maps import MapLookup, StoredMap
from reflex_lookout.settings import MIB
from reflex_lookout.sourcemaps.pages import PageSource, page_sources

log = logging.getLogger(__name__)

MAX_MODULE_BYTES = 8 * MIB
FETCH_DEADLINE_S = 2.0
MAX_PATH_CHARS = 2048
BUILD_ID = "dev"
MODULE_SUFFIXES = (".js", ".jsx", ".mjs", ".ts", ".tsx")
JS_TYPES = ("text/javascript", "application/javascript")
# One path segment as Vite serves this app's modules: `[try]._index.jsx`, `.vite`, `@radix-ui`.
_SEGMENT = re.compile(r"[A-Za-z0-9_.\-\[\]$~+@,=()!]+")
_MAP_COMMENTS = (b"//# sourceMappingURL=", b"//@ sourceMappingURL=")


def module_path(asset_path: str) -> str | None:
    """The decoded URL path of a JavaScript module on the dev server, or None if `asset_path` names
    anything else (another host, a parent directory, Vite's internals). Query and fragment
    (`?t=...` after a hot update) are dropped."""
    if len(asset_path) > MAX_PATH_CHARS or not asset_path.startswith("/") or asset_path.startswith("//"):
        return None
    path = unquote(asset_path.split("?", 1)[0].split("#", 1)[0])
    segments = path[1:].split("/")
    if segments[0].startswith("@") or not path.endswith(MODULE_SUFFIXES):
        return None
    if any(segment in (".", "..") or not _SEGMENT.fullmatch(segment) for segment in segments):
        return None
    return path


def inline_map(module: bytes) -> bytes | None:
    """The source map a module carries in its last line as a `data:application/json` URL, or None."""
    body = module.rstrip()
    last = body[body.rfind(b"\n") + 1:]
    prefix = next((p for p in _MAP_COMMENTS if last.startswith(p)), None)
    if prefix is None:
        return None
    header, comma, payload = last[len(prefix):].partition(b",")
    params = header.split(b";")
    if not comma or params[0] != b"data:application/json":
        return None
    if b"base64" not in params[1:]:
        return unquote_to_bytes(payload)
    try:
        return base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None


class ModuleReader:
    """Reads a module and its inline map from a dev server, within the bounds above; one HTTP client
    (no redirects, no proxy from the environment) for every origin it is asked about. Safe to
    share between threads."""

    def __init__(
        self,
        *,
        max_bytes: int = MAX_MODULE_BYTES,
        deadline_s: float = FETCH_DEADLINE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_bytes, self._deadline_s, self._clock = max_bytes, deadline_s, clock
        self._client = httpx.Client(follow_redirects=False, trust_env=False, timeout=deadline_s)

    def close(self) -> None:
        self._client.close()

    def read(self, origin: str, asset_path: str,
             pages: Callable[[], Mapping[str, PageSource]] = dict) -> StoredMap | None:
        """The module at `asset_path` on the dev server at `origin`, with its map and Python pages
        (`pages()`, asked only once a map is found, and those the map's sources declare), or None."""
        path = module_path(asset_path)
        if path is None:
            return None
        module = self._fetch(origin.rstrip("/") + path)
        sourcemap = inline_map(module) if module is not None else None
        if module is None or sourcemap is None:
            return None
        return StoredMap(debug_id="", asset_path=path, build_id=BUILD_ID, source=module, sourcemap=sourcemap,
                         pages={**declared_pages(sourcemap, path, BUILD_ID), **pages()})

    def _fetch(self, url: str) -> bytes | None:
        deadline = self._clock() + self._deadline_s
        try:
            with self._client.stream("GET", url) as answer:
                if answer.status_code != 200:
                    log.info("Dev module %s: the dev server answered %d (redirects are not followed).",
                             url, answer.status_code)
                    return None
                if answer.headers.get("content-type", "").split(";")[0].strip().lower() not in JS_TYPES:
                    log.info("Dev module %s is not JavaScript (%s).", url, answer.headers.get("content-type"))
                    return None
                body = bytearray()
                for chunk in answer.iter_bytes():
                    body += chunk
                    if len(body) > self._max_bytes:
                        self._too_big(url)
                        return None
                    if self._clock() > deadline:
                        log.warning("Dev module %s: not read within %.1f s; left unmapped.", url, self._deadline_s)
                        return None
                return bytes(body)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            log.info("Dev module %s: not read (%s).", url, exc)
            return None

    def _too_big(self, url: str) -> None:
        log.warning("Dev module %s is larger than %d bytes; left unmapped.", url, self._max_bytes)


class DevModules(ModuleReader):
    """A `MapLookup` over the modules of this app's dev server at `origin` (`http://localhost:3000`).
    `pages` gives the Python pages by original source path (`page_sources`), read once when first
    needed."""

    def __init__(
        self,
        origin: str,
        pages: Callable[[], Mapping[str, PageSource]] = dict,
        *,
        max_bytes: int = MAX_MODULE_BYTES,
        deadline_s: float = FETCH_DEADLINE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(max_bytes=max_bytes, deadline_s=deadline_s, clock=clock)
        self.origin = origin.rstrip("/")
        self._pages_source = pages
        self._pages: dict[str, PageSource] | None = None

    def by_debug_id(self, debug_id: str, project_id: int = LOCAL_PROJECT_ID) -> StoredMap | None:
        return None  # dev modules carry no debug ID

    def by_asset_path(self, asset_path: str) -> StoredMap | None:
        return self.read(self.origin, asset_path, self.pages)

    def pages(self) -> dict[str, PageSource]:
        """The Python pages by original source path, listed on first use (the app's pages are all
        added by then); {} when they cannot be listed."""
        if self._pages is None:
            try:
                self._pages = dict(self._pages_source())
            except Exception:  # the frames still map without their pages
                log.exception("The Python pages of the generated routes could not be listed.")
                self._pages = {}
        return self._pages


class FirstFound:
    """A `MapLookup` asking each lookup in turn: the first map found wins."""

    def __init__(self, *lookups: MapLookup) -> None:
        self.lookups = lookups

    def by_debug_id(self, debug_id: str, project_id: int = LOCAL_PROJECT_ID) -> StoredMap | None:
        return next((m for m in (lookup.by_debug_id(debug_id, project_id) for lookup in self.lookups) if m), None)

    def by_asset_path(self, asset_path: str) -> StoredMap | None:
        return next((m for m in (lookup.by_asset_path(asset_path) for lookup in self.lookups) if m), None)


def dev_server_origin() -> str:
    """This app's dev server: always on this machine, at Reflex's frontend port (`reflex run` puts
    the port it picked in the environment). Not `deploy_url`, which may name a proxy elsewhere."""
    from reflex_base.config import get_config
    from reflex_base.constants import DefaultPorts

    return f"http://localhost:{get_config().frontend_port or DefaultPorts.FRONTEND_PORT}"


def is_dev_mode() -> bool:
    from reflex_base.constants import Env
    from reflex_base.environment import environment

    return environment.REFLEX_ENV_MODE.get() == Env.DEV


def with_dev_server(library: MapLookup, app: Any) -> MapLookup:
    """Where symbolication looks for maps in this run: the stored builds' maps (`library`), and in
    dev mode, after them, the modules of `app`'s (an `rx.App`) dev server, with its pages."""
    if not is_dev_mode():
        return library
    return FirstFound(library, DevModules(dev_server_origin(), lambda: page_sources(app)))
