"""What a position in a served JavaScript file maps to: its original source, function, line, column
and context lines — or why it maps to nothing.

`Positions` answers through a parsed map (app/sourcemaps/map_cache.py) and remembers the last
MAX_POSITIONS answers: the frames of an error that happens again (React's own frames in every
stack, too) are the same positions, so a warm event costs dictionary lookups, not symbolic calls
and path arithmetic.

Context lines are read for the app's own code, and for a frame the caller asks them for (the
innermost of a stack): the console shows library frames folded, without their context, and
reading five lines each side is most of symbolic's cost per frame and most of a mapped event's
size (bench/symbolicate.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, NamedTuple

from app.sourcemaps.map_cache import ParsedMap
from app.sourcemaps.source_paths import in_app as in_app_for, is_upload, project_path

# Each at most ~11 lines of 200 characters, twice (the lines, and the JSON of the frame a kept patch
# holds): a few tens of MiB at worst.
MAX_POSITIONS = 10_000
CONTEXT_LINES = 5
LINE_LENGTH = 200
NAME_LENGTH = 256


Spec = tuple[dict[str, Any], str]  # a frame's change in a kept patch, and its JSON (event_patch.py)


class Original(NamedTuple):  # a tuple: made once per new position, and a dataclass costs more to make
    path: str  # project-relative (app/sourcemaps/source_paths.py)
    function: str  # "" when the map names none
    line: int
    column: int
    in_app: bool
    pre_context: tuple[str, ...]
    context_line: str
    post_context: tuple[str, ...]
    python_page: dict[str, Any] | None  # the page's PageSource as JSON, when the source has one
    has_context: bool  # whether the context lines were read (see the module's docstring)
    # What a mapped frame of it is in the patch the store keeps (event_patch.py), and as JSON, by the
    # patch's map index: made when first needed, then shared by the events that hit it (none changes it).
    specs: dict[int, Spec]


class Positions:
    def __init__(self, max_positions: int = MAX_POSITIONS) -> None:
        self.max_positions = max_positions
        self._known: OrderedDict[tuple[bytes, bool, int, int], Original | str] = OrderedDict()
        self._lock = threading.Lock()

    def original(self, entry: ParsedMap, line: int, column: int, context: bool = False) -> Original | str:
        """Where (`line`, `column`), 1-based, of the file `entry` maps leads; or a sentence saying
        why nowhere. `context`: read the context lines even if the source is not the app's own."""
        # The same bytes map to other paths as an uploaded bundle (app/sourcemaps/source_paths.py).
        key = (entry.digest, is_upload(entry.paths_of), line, column)
        with self._lock:
            found = self._known.get(key)
            if found is not None and (isinstance(found, str) or found.has_context or not context):
                self._known.move_to_end(key)
                return found
        found = _look_up(entry, line, column, context)
        with self._lock:
            self._known[key] = found
            while len(self._known) > self.max_positions:
                self._known.popitem(last=False)
        return found


def _look_up(entry: ParsedMap, line: int, column: int, context: bool) -> Original | str:
    lines = entry.line_lengths
    if line > len(lines):
        return f"Line {line} is outside the source map of {entry.asset_path} (the file has {len(lines)} lines)."
    if column > lines[line - 1]:
        return f"Column {column} is past the end of line {line} of {entry.asset_path} ({lines[line - 1]} columns)."
    token = entry.cache.lookup(line, column, 0)
    if token is None or not token.src:
        return f"The source map of {entry.asset_path} maps nothing at line {line}, column {column}."
    path = project_path(token.src, entry.asset_path, entry.paths_of)
    in_app = in_app_for(path, entry.paths_of)
    page = entry.pages.get(path)
    python_page = None if page is None else page.to_json()
    function = (token.function_name or token.name or "")[:NAME_LENGTH]
    if not (in_app or context):
        return Original(path, function, token.line, token.col, False, (), "", (), python_page, False, {})
    token = entry.cache.lookup(line, column, CONTEXT_LINES) or token
    return Original(
        path, function, token.line, token.col, in_app,
        tuple(_cut(t) for t in token.pre_context), _cut(token.context_line or ""),
        tuple(_cut(t) for t in token.post_context), python_page, True, {},
    )


def _cut(text: str) -> str:
    text = text.rstrip("\r\n")
    return text if len(text) <= LINE_LENGTH else text[:LINE_LENGTH - 1] + "…"
