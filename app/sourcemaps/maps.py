"""What the parts of source-map handling share: a stored map, and how symbolication finds one."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from app.settings import LOCAL_PROJECT_ID
from reflex_lookout.sourcemaps.bundle import DEBUG_ID
from reflex_lookout.sourcemaps.pages import PageSource

HEX_ID = re.compile(r"[0-9a-f]{32}")  # as some SDKs spell it


@dataclass(frozen=True)
class StoredMap:
    """One JavaScript file as it was served, with its source map."""

    debug_id: str  # lower-case UUID with dashes; "" when the file has none (dev modules)
    asset_path: str  # URL path it is served at: "/assets/_index-CQSUJ9PM.js"
    build_id: str  # the build it belongs to ("dev" for modules read from the dev server)
    source: bytes  # the served (minified, debug-ID-injected) JavaScript
    sourcemap: bytes  # the source map (JSON)
    # Original source path (project-relative, as symbolication names it) → its Python page.
    pages: dict[str, PageSource] = field(default_factory=dict)


class MapLookup(Protocol):
    """Where symbolication finds maps. Each call may touch the database or the network: call it
    off the event loop. None: there is no such map. A debug ID is looked up for the project whose
    event names it (another project's uploads are not its maps); an asset path, only for the app's
    own events."""

    def by_debug_id(self, debug_id: str, project_id: int = LOCAL_PROJECT_ID) -> StoredMap | None: ...

    def by_asset_path(self, asset_path: str) -> StoredMap | None: ...


def normal_debug_id(debug_id: object) -> str | None:
    """A debug ID as the build step stores it (lower-case UUID with dashes), or None if it is not one."""
    if not isinstance(debug_id, str) or len(debug_id) > 64:
        return None
    text = debug_id.strip().lower()
    if DEBUG_ID.fullmatch(text):
        return text
    if HEX_ID.fullmatch(text):
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"
    return None
