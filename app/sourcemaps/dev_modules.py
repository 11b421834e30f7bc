"""Dev mode (`reflex run`): the source maps of the modules this app's Vite dev server serves.

In dev the browser runs unminified modules served by Vite (React Router's dev server on Reflex's
frontend port), each ending with its source map inline:
`//# sourceMappingURL=data:application/json;base64,...`. Vite rewrites JSX, so lines shift; with
`DevModules` a dev stack frame names the original file and line, as a prod frame does with the
build's stored maps.

The modules are read with `ModuleReader` (app/sourcemaps/module_reader.py), within its bounds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from app.settings import LOCAL_PROJECT_ID
from app.sourcemaps.maps import MapLookup, StoredMap
from app.sourcemaps.module_reader import ModuleReader
from reflex_lookout.sourcemaps.pages import PageSource, page_sources

log = logging.getLogger(__name__)


class DevModules(ModuleReader):
    """A `MapLookup` over the modules of this app's dev server at `origin` (`http://localhost:3000`).
    `pages` gives the Python pages by original source path (`page_sources`), read once when first
    needed."""

    def __init__(
        self,
        origin: str,
        pages: Callable[[], Mapping[str, PageSource]] = dict,
        **bounds: Any,  # ModuleReader's
    ) -> None:
        super().__init__(**bounds)
        self.origin = origin.rstrip("/")
        self._pages_source = pages
        self._pages: dict[str, PageSource] | None = None

    def by_debug_id(self, debug_id: str, project_id: int = LOCAL_PROJECT_ID) -> StoredMap | None:
        return None  # dev modules carry no debug ID

    def by_asset_path(self, asset_path: str) -> StoredMap | None:
        """The module's map, or None; NotRead when it was not asked for or not waited for."""
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
