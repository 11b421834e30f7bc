"""Symbolication over real maps: minified builds made by esbuild and injected by sentry-cli
(tests/sourcemaps/reflex_like_build.py), the error thrown by node, its frames mapped back."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

from app.sourcemaps.map_cache import MapCache, parse
from app.sourcemaps.maps import StoredMap
from app.sourcemaps.symbolicate import Symbolicator
from plugin_support.envelopes import SAMPLE_PATHS
from tests.sourcemaps.reflex_like_build import COMPONENTS, PAGE, ROUTE, Build, Maps

PYTHON_PAGE = {"module": PAGE.module, "function": PAGE.function, "file": PAGE.file, "line": PAGE.line}


@pytest.fixture
def first(first_build: Build) -> Build:
    return first_build


@pytest.fixture
def second(second_build: Build) -> Build:
    return second_build


def frames(event: dict[str, Any], key: str = "stacktrace") -> list[dict[str, Any]]:
    return event["exception"]["values"][0][key]["frames"]


def test_minified_frames_become_the_original_ones_by_debug_id(first: Build) -> None:
    event = first.event()
    sent = copy.deepcopy(frames(event))
    assert Symbolicator(Maps(first.stored())).symbolicate(event)
    mapped = frames(event)
    # innermost last, as Sentry orders frames
    assert [(f["filename"], f.get("function"), f["lineno"], f["in_app"]) for f in mapped] == [
        (ROUTE, "Component", 5, True),
        (".web/utils/state.js", "dispatch", 4, False),
        (".web/node_modules/tiny-dispatch/index.js", "invoke", 2, False),
        (ROUTE, "<anonymous>", 5, True),
        (COMPONENTS, "renderBomb", 3, True),
    ]
    thrown = mapped[-1]
    assert thrown["abs_path"] == COMPONENTS and thrown["colno"] == 11
    assert thrown["context_line"] == '    throw new Error("Lookout try: a render error");'
    assert thrown["pre_context"] == ["export function renderBomb(armed) {", "  if (armed) {"]
    assert thrown["post_context"][:3] == ["  }", "  return null;", "}"]
    assert thrown["data"] == {"sourcemap": {"debug_id": first.debug_id, "build_id": "build-1", "resolved_with": "debug_id"}}
    assert mapped[0]["data"]["python_page"] == PYTHON_PAGE and "python_page" not in mapped[1]["data"]
    # the frames as sent stay beside them
    assert frames(event, "raw_stacktrace") == sent and sent[-1]["filename"] == first.url
    # context lines for the app's own frames, not for library ones (the console folds those)
    assert [("context_line" in f, "pre_context" in f) for f in mapped] == [
        (True, True), (False, False), (False, False), (True, True), (True, True)]


def test_the_innermost_frame_has_its_context_even_in_a_library(first: Build) -> None:
    event = first.event()
    del frames(event)[-2:]  # the stack now ends in the package's frame, as an error thrown there would
    assert Symbolicator(Maps(first.stored())).symbolicate(event)
    innermost = frames(event)[-1]
    assert innermost["filename"].startswith(".web/node_modules/tiny-dispatch/") and innermost["in_app"] is False
    assert innermost["context_line"] and "context_line" not in frames(event)[-2]


def test_the_same_code_built_elsewhere_maps_to_the_same_frames(first: Build, second: Build) -> None:
    one, two = first.event(), second.event()
    assert frames(one) != frames(two) and first.asset_path != second.asset_path  # other chunk, columns, names
    symbolicator = Symbolicator(Maps(first.stored(), second.stored()))
    assert symbolicator.symbolicate(one) and symbolicator.symbolicate(two)

    def original(event: dict[str, Any]) -> list[tuple[Any, ...]]:
        return [(f["filename"], f.get("function"), f["lineno"], f["colno"], f.get("context_line")) for f in frames(event)]

    assert original(one) == original(two)
    assert frames(two)[-1]["data"]["sourcemap"] == {"debug_id": second.debug_id, "build_id": "build-2",
                                                    "resolved_with": "debug_id"}


def test_without_a_debug_id_the_map_is_found_by_the_path_it_was_served_at(first: Build) -> None:
    event = first.event(images=False)
    for frame in frames(event):  # scheme, host, query and fragment do not matter
        frame["abs_path"] = frame["filename"] = f"https://lookout.example{first.asset_path}?v=3#top"
    assert Symbolicator(Maps(first.stored())).symbolicate(event)
    assert frames(event)[-1]["filename"] == COMPONENTS
    assert frames(event)[-1]["data"]["sourcemap"]["resolved_with"] == "asset_path"


def test_another_apps_frames_are_matched_by_debug_id_only(first: Build) -> None:
    """Only the app's own events (by_path) may match a file of its builds by path: another app's
    `/assets/…` is not ours."""
    event = first.event(images=False)
    assert Symbolicator(Maps(first.stored())).symbolicate(event, by_path=False)
    assert frames(event)[-1]["data"] == {"sourcemap_error": "No source map: the event names no debug ID for this file."}
    with_ids = first.event()
    assert Symbolicator(Maps(first.stored())).symbolicate(with_ids, by_path=False)
    assert frames(with_ids)[-1]["data"]["sourcemap"]["resolved_with"] == "debug_id"


class OneProjects(Maps):
    """Maps that are `project_id`'s only, as uploads are (app/sourcemaps/library.py)."""

    def __init__(self, project_id: int, *stored: StoredMap) -> None:
        super().__init__(*stored)
        self.project_id = project_id

    def by_debug_id(self, debug_id: str, project_id: int = 1) -> StoredMap | None:
        return super().by_debug_id(debug_id) if project_id == self.project_id else None


def test_an_uploaded_map_maps_another_apps_frames_with_its_own_paths_and_in_app_rule(first: Build) -> None:
    """Another app's bundle (uploaded with sentry-cli: build ID "upload-…") knows nothing of
    Lookout's layout: its sources are named from the URL path, and all but libraries are in app."""
    uploaded = dataclasses.replace(first.stored(), build_id="upload-2-" + "a" * 40, pages={})
    event = first.event()
    assert Symbolicator(OneProjects(2, uploaded)).symbolicate(event, by_path=False, project_id=2)
    assert [(f["filename"], f.get("function"), f["lineno"], f["in_app"]) for f in frames(event)] == [
        ("app/routes/[try]._index.jsx", "Component", 5, True),
        ("utils/state.js", "dispatch", 4, True),
        ("node_modules/tiny-dispatch/index.js", "invoke", 2, False),
        ("app/routes/[try]._index.jsx", "<anonymous>", 5, True),
        ("app_components/app/pages/try_errors.jsx", "renderBomb", 3, True),
    ]
    assert frames(event)[-1]["data"] == {"sourcemap": {"debug_id": first.debug_id, "build_id": uploaded.build_id,
                                                       "resolved_with": "debug_id"}}


def test_a_debug_id_is_looked_up_among_the_events_projects_maps_cached_or_not(first: Build) -> None:
    symbolicator = Symbolicator(OneProjects(2, first.stored()))
    mapped = first.event()
    assert symbolicator.symbolicate(mapped, by_path=False, project_id=2)
    assert "sourcemap" in frames(mapped)[-1]["data"]
    elsewhere = first.event()  # the same debug ID, in an event of project 3: the cached map is not its
    assert symbolicator.symbolicate(elsewhere, by_path=False, project_id=3)
    assert frames(elsewhere)[-1]["data"] == {"sourcemap_error": f"No source map has the debug ID {first.debug_id}."}


def test_a_debug_id_without_a_map_says_so_and_keeps_the_frame(first: Build) -> None:
    event = first.event()
    sent = copy.deepcopy(frames(event))
    assert Symbolicator(Maps()).symbolicate(event)
    for before, after in zip(sent, frames(event), strict=True):
        assert after == {**before, "data": {"sourcemap_error": f"No source map has the debug ID {first.debug_id}."}}
    assert "raw_stacktrace" not in event["exception"]["values"][0]  # nothing mapped: the frames are as sent


def test_a_file_without_a_map_says_so(first: Build) -> None:
    event = first.event(images=False)
    assert Symbolicator(Maps()).symbolicate(event)
    assert frames(event)[-1]["data"] == {"sourcemap_error": f"No source map for {first.asset_path}."}


def test_a_map_at_the_path_from_another_build_is_not_used_for_a_debug_id(first: Build, second: Build) -> None:
    event = second.event()
    other = StoredMap(first.debug_id, second.asset_path, "build-1", first.chunk.read_bytes(),
                      Path(f"{first.chunk}.map").read_bytes())
    assert Symbolicator(Maps(other)).symbolicate(event)
    assert frames(event)[-1]["data"] == {"sourcemap_error": f"No source map has the debug ID {second.debug_id}."}


def test_positions_outside_the_map_say_so(first: Build) -> None:
    event = first.event()
    beyond_lines, beyond_line_end, inside = frames(event)[-3:]
    lines = first.chunk.read_text().split("\n")
    beyond_lines["lineno"] = len(lines) + 1
    beyond_line_end["colno"] = len(lines[beyond_line_end["lineno"] - 1]) + 1
    assert Symbolicator(Maps(first.stored())).symbolicate(event)
    assert frames(event)[-3]["data"]["sourcemap_error"] == (
        f"Line {len(lines) + 1} is outside the source map of {first.asset_path} (the file has {len(lines)} lines).")
    assert frames(event)[-2]["data"]["sourcemap_error"].startswith(
        f"Column {beyond_line_end['colno']} is past the end of line {beyond_line_end['lineno']} of {first.asset_path}")
    assert frames(event)[-1]["filename"] == COMPONENTS  # the others still map


@pytest.mark.parametrize("sourcemap", [b'{"version": 3, "sources": [', b'{"version":3,"sources":[],"mappings":"AAAA"}', b"[]"])
def test_an_unreadable_map_says_why_and_is_parsed_once(first: Build, sourcemap: bytes) -> None:
    maps = Maps(first.stored(sourcemap))
    symbolicator = Symbolicator(maps)
    event = first.event()
    assert symbolicator.symbolicate(event)
    reason = frames(event)[-1]["data"]["sourcemap_error"]
    assert reason.startswith(f"The source map of {first.asset_path} is unreadable: ") and len(reason) > 60
    assert maps.lookups == 1
    symbolicator.symbolicate(first.event())
    assert maps.lookups == 1  # remembered: not looked up nor parsed again


def test_parsed_maps_are_kept_between_events_within_their_bounds(first: Build, second: Build) -> None:
    maps = Maps(first.stored(), second.stored())
    symbolicator = Symbolicator(maps, MapCache(max_maps=1))
    for _ in range(2):
        assert symbolicator.symbolicate(first.event())
    assert maps.lookups == 1  # the second event used the parsed map
    symbolicator.symbolicate(second.event())
    symbolicator.symbolicate(first.event())
    assert maps.lookups == 3 and len(symbolicator.cache) == 1  # each evicted the other
    sizes = [parse(m).size for m in maps.maps]  # what each costs parsed, its line table included
    by_bytes = Symbolicator(maps, MapCache(max_bytes=max(sizes)))  # room for either, not both
    by_bytes.symbolicate(first.event())
    by_bytes.symbolicate(second.event())
    assert len(by_bytes.cache) == 1 and by_bytes.cache.bytes <= by_bytes.cache.max_bytes


def test_only_so_many_frames_and_maps_per_event(first: Build, second: Build) -> None:
    event = first.event()
    sent = copy.deepcopy(frames(event))
    assert Symbolicator(Maps(first.stored()), max_frames=2).symbolicate(event)
    assert frames(event)[:-2] == sent[:-2] and [f["filename"] for f in frames(event)[-2:]] == [ROUTE, COMPONENTS]
    mixed = first.event()
    frames(mixed)[0].update(filename=second.url, abs_path=second.url)
    mixed["debug_meta"]["images"].append({"type": "sourcemap", "code_file": second.url, "debug_id": second.debug_id})
    assert Symbolicator(Maps(first.stored(), second.stored()), max_lookups=1).symbolicate(mixed)
    assert frames(mixed)[0]["data"] == {"sourcemap_error": "Not looked up: this event needs more than 1 source maps."}
    assert frames(mixed)[-1]["filename"] == COMPONENTS


class Failing(Maps):
    """A lookup whose reads fail with `error` (a test seam: the database away, or a bug)."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error

    def by_debug_id(self, debug_id: str, project_id: int = 1) -> StoredMap | None:
        raise self.error


def test_a_database_away_while_looking_up_propagates_and_any_other_failure_is_the_frames(first: Build) -> None:
    away = sqlalchemy.exc.OperationalError("select", {}, Exception("connection refused"))
    with pytest.raises(sqlalchemy.exc.OperationalError):
        Symbolicator(Failing(away)).symbolicate(first.event())
    event = first.event()
    assert Symbolicator(Failing(RuntimeError("a bug"))).symbolicate(event)
    assert frames(event)[-1]["data"]["sourcemap_error"] == "The source map could not be looked up: RuntimeError: a bug"


def test_frames_that_are_not_javascript_from_a_url_are_left_alone(first: Build) -> None:
    event = first.event()
    others = [
        {"filename": "<anonymous>", "function": "eval", "lineno": 1, "colno": 30, "in_app": True},
        {"filename": "node:internal/modules/run_main", "lineno": 12, "colno": 5},
        {"filename": first.url, "function": "eval", "in_app": True},  # no position
        {"filename": first.url, "lineno": 3, "colno": 0},
        {"module": "app.pages.orders", "function": "checkout", "lineno": 3, "in_app": True},
        "not a frame",
    ]
    frames(event)[:] = copy.deepcopy(others)
    assert not Symbolicator(Maps(first.stored())).symbolicate(event)
    assert frames(event) == others


def test_real_sdk_events_without_maps_keep_everything_they_had() -> None:
    changed = 0
    for path in SAMPLE_PATHS:
        event = json.loads(path.read_text())
        before = copy.deepcopy(event)
        if not Symbolicator(Maps()).symbolicate(event):
            assert event == before, path
            continue
        changed += 1
        for holder in [*event["exception"]["values"], *(event.get("threads") or {}).get("values", [])]:
            for frame in (holder.get("stacktrace") or {}).get("frames") or []:
                reason = frame.get("data", {}).pop("sourcemap_error", None)
                assert reason is None or reason.startswith("No source map"), (path, reason)
                if frame.get("data") == {}:
                    del frame["data"]
        assert event == before, path
    assert changed >= 5  # the browser and node events among them
