"""The Python pages another app's generated modules declare, read from their source map.

Lookout lists its own pages from its running app (reflex_lookout/sourcemaps/pages.py, `page_sources`); another
app's it cannot list. A generated module may say which page it is, in a line `page_marker` writes
(`// reflex-lookout page: {"module": ..., "function": ..., "file": ..., "line": ...}`). The line is read
from the map's `sourcesContent`, not from the served code: a transform (Vite's esbuild, a minifier)
drops comments, the map keeps each original source as it was. Each source's first such line counts;
it names the source's project-relative path as symbolication names it (app/sourcemaps/source_paths.py),
so a frame mapped into that source gets `data.python_page`.

Bounded: the map is one that was already read within its bounds (app/sourcemaps/dev_modules.py);
at most MAX_SOURCES sources are looked at, and a declaration longer than MAX_DECLARATION characters,
or not of PageSource's shape, is no declaration.
"""

from __future__ import annotations

import json
import re

from app.sourcemaps.source_paths import project_path
from reflex_lookout.sourcemaps.pages import PAGE_MARKER, PageSource, from_json

MAX_SOURCES = 1000
MAX_DECLARATION = 2000
_DECLARATION = re.compile(rf"^{re.escape(PAGE_MARKER)}(\{{[^\n]{{0,{MAX_DECLARATION}}}\}})[ \t\r]*$", re.MULTILINE)


def declared_pages(sourcemap: bytes, asset_path: str, build_id: str) -> dict[str, PageSource]:
    """Original source path → the page its module declares, for the sources of `sourcemap` (the map
    of the file served at `asset_path` by `build_id`) that declare one; {} for a map that is not
    JSON or declares none."""
    if PAGE_MARKER.encode() not in sourcemap:  # most maps: no parse
        return {}
    try:
        found = json.loads(sourcemap)
    except (ValueError, RecursionError):
        return {}
    sources, contents = (found.get("sources"), found.get("sourcesContent")) if isinstance(found, dict) else (None, None)
    if not isinstance(sources, list) or not isinstance(contents, list):
        return {}
    pages: dict[str, PageSource] = {}
    for source, content in list(zip(sources, contents, strict=False))[:MAX_SOURCES]:
        if not isinstance(source, str) or not isinstance(content, str):
            continue
        declared = _DECLARATION.search(content)
        try:
            entry = json.loads(declared.group(1)) if declared else None
        except ValueError:
            continue
        page = from_json({"page": entry}).get("page")
        if page is not None:
            pages[project_path(source, asset_path, build_id)] = page
    return pages
