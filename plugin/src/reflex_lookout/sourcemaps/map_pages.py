"""The Python pages of a Reflex build, carried inside its source maps, so that they reach a Lookout with
an upload (sentry-cli sends chunks and maps, nothing else).

The build step (build_step.py) writes each chunk's map with one more field, first:

    {"x_reflex_lookout":{"pages":{".web/app/routes/_index.jsx":{"module":…,"function":…,"file":…,"line":…}}},
     "version":3,"sources":[…],…}

holding the pages (pages.py) of the generated modules among that map's `sources`. Source-map readers
ignore fields they do not know (the `x_` prefix is the format's convention for extensions). A Lookout
reads it back (`pages_of`) without parsing the map: the field is first, so only its value is decoded,
at most MAX_FIELD_BYTES of it. Its presence also says that the map is a Reflex build's: its sources are
laid out as Reflex's `.web/` (pages.py `WEB_PREFIX`), whoever uploaded it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from reflex_lookout.sourcemaps import pages
from reflex_lookout.sourcemaps.pages import WEB_PREFIX, PageSource

FIELD = "x_reflex_lookout"
PREFIX = ('{"' + FIELD + '":').encode()
MAX_FIELD_BYTES = 1024 * 1024


def with_pages(sourcemap: Mapping[str, object], found: Mapping[str, PageSource]) -> bytes:
    """The map (parsed JSON) written again with the field first, naming the pages of `found` among
    its sources."""
    sources = sourcemap.get("sources")
    names = [s.replace("\\", "/") for s in sources if isinstance(s, str)] if isinstance(sources, list) else []
    mine = {path: source for path, source in found.items() if _among(path, names)}
    rest = {key: value for key, value in sourcemap.items() if key != FIELD}
    return json.dumps({FIELD: {"pages": pages.to_json(mine)}, **rest}, separators=(",", ":")).encode()


def _among(path: str, sources: Sequence[str]) -> bool:
    """Whether a project-relative module (`.web/app/routes/x.jsx`) is one of a map's sources (relative
    to the map: `../../../app/routes/x.jsx`)."""
    inside = path.removeprefix(WEB_PREFIX + "/")
    return any(source == inside or source.endswith("/" + inside) for source in sources)


def pages_of(sourcemap: bytes) -> dict[str, PageSource] | None:
    """The pages a map carries, or None when it does not carry the field (not a Reflex build's map
    made by this build step), or carries one that cannot be read."""
    if not sourcemap.startswith(PREFIX):
        return None
    text = sourcemap[len(PREFIX):len(PREFIX) + MAX_FIELD_BYTES].decode("utf-8", "replace")
    try:
        value, _end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return pages.from_json(value.get("pages")) if isinstance(value, dict) else None
