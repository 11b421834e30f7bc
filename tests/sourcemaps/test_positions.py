"""Positions mapped through a parsed map, remembered within a bound, never mixed up between maps."""

from __future__ import annotations

import dataclasses
import json

from app.sourcemaps.map_cache import ParsedMap, parse
from app.sourcemaps.maps import StoredMap
from app.sourcemaps.positions import Original, Positions
from reflex_lookout.sourcemaps.map_pages import FIELD, with_pages
from reflex_lookout.sourcemaps.pages import PageSource

SOURCE = b"function a(){throw new Error('x')}\n"
LINE = "  throw new Error('" + "x" * 300 + "');"


def _map(original_line: str = LINE, name: str = "a.js") -> bytes:
    content = f"function a() {{\\n{original_line}\\n}}\\n"
    return (f'{{"version":3,"sources":["../../../app/routes/{name}"],"sourcesContent":["{content}"],'
            '"names":[],"mappings":"AAAA,aACE"}').encode()


def parsed(original_line: str = LINE, name: str = "a.js") -> ParsedMap:
    entry = parse(StoredMap("", "/assets/a-1.js", "b1", SOURCE, _map(original_line, name)))
    assert isinstance(entry, ParsedMap)
    return entry


def test_a_position_maps_to_its_original_with_context_lines_cut() -> None:
    found = Positions().original(parsed(), 1, 14)
    assert isinstance(found, Original)
    assert (found.path, found.line, found.column, found.in_app) == (".web/app/routes/a.js", 2, 3, True)
    assert found.pre_context == ("function a() {",) and found.post_context[0] == "}"
    assert len(found.context_line) == 200 and found.context_line.endswith("…")


def test_positions_outside_the_file_say_so() -> None:
    positions = Positions()
    assert positions.original(parsed(), 3, 1) == "Line 3 is outside the source map of /assets/a-1.js (the file has 2 lines)."
    assert positions.original(parsed(), 1, 35) == "Column 35 is past the end of line 1 of /assets/a-1.js (34 columns)."


def test_answers_are_remembered_within_the_bound_and_per_map() -> None:
    positions = Positions(max_positions=2)
    one, other = parsed(), parsed("  throw new Error('other');", "b.js")
    first = positions.original(one, 1, 14)
    assert positions.original(one, 1, 14) is first  # remembered
    assert positions.original(other, 1, 14).path == ".web/app/routes/b.js"  # same position, another map
    positions.original(one, 1, 1)
    assert len(positions._known) == 2 and positions.original(one, 1, 14) is not first  # the oldest went


def test_the_same_bytes_uploaded_by_another_app_map_to_its_paths_not_the_apps() -> None:
    own = parsed()
    uploaded = dataclasses.replace(own, build_id="upload-2-" + "a" * 40)  # same bytes, same digest
    positions = Positions()
    assert positions.original(own, 1, 14).path == ".web/app/routes/a.js"
    assert positions.original(uploaded, 1, 14).path == "app/routes/a.js"
    assert positions.original(own, 1, 14).path == ".web/app/routes/a.js"


def test_a_reflex_apps_uploaded_map_is_laid_out_as_this_apps_and_names_its_python_pages() -> None:
    """A map written by reflex-lookout's build step carries its pages (map_pages.py): uploaded by
    another Reflex app, its paths are `.web/…` as this app's, and its frames name their Python page."""
    page = PageSource("other_app.other_app", "index", "other_app/other_app.py", 7)
    plain = json.loads(_map())
    carried = with_pages(plain, {".web/app/routes/a.js": page, ".web/app/routes/b.js": page})
    assert json.loads(carried)[FIELD] == {"pages": {".web/app/routes/a.js": page.to_json()}}  # its own sources only
    entry = parse(StoredMap("", "/assets/a-1.js", "upload-2-" + "b" * 40, SOURCE, carried))
    assert isinstance(entry, ParsedMap)
    found = Positions().original(entry, 1, 14)
    assert isinstance(found, Original)
    assert (found.path, found.in_app, found.python_page) == (".web/app/routes/a.js", True, page.to_json())
