"""Grouping: fingerprints, titles and culprits, on hand-made cases and on 190 real SDK events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.inbox.grouping import group, normalise
from plugin_support.envelopes import SAMPLE_PATHS, SAMPLES


def error(kind: str, value: str, *frames: tuple[str, str, bool]) -> dict[str, Any]:
    return {"exception": {"values": [{"type": kind, "value": value, "stacktrace": {"frames": [
        {"module": module, "function": function, "in_app": in_app} for module, function, in_app in frames
    ]}}]}}


HANDLER = ("app.pages.orders", "checkout", True)
LIBRARY = ("sqlalchemy.engine", "execute", False)


def test_the_same_error_twice_is_one_issue() -> None:
    assert group(error("KeyError", "'user'", HANDLER, LIBRARY)) == group(error("KeyError", "'user'", HANDLER, LIBRARY))


def test_messages_differing_only_in_ids_are_one_issue() -> None:
    first = group(error("LookupError", "order 1234 of a@b.example not found (3f2a9c1e-1b2c-4d5e-8f90-123456789abc)", HANDLER))
    second = group(error("LookupError", "order 98 of c.d@e.example not found (00000000-1111-2222-3333-444444444444)", HANDLER))
    assert first.fingerprint == second.fingerprint
    assert first.title != second.title  # each keeps its own words


def test_different_types_or_places_are_different_issues() -> None:
    base = group(error("KeyError", "'user'", HANDLER))
    assert group(error("ValueError", "'user'", HANDLER)).fingerprint != base.fingerprint
    assert group(error("KeyError", "'user'", ("app.pages.orders", "refund", True))).fingerprint != base.fingerprint


def test_title_and_culprit_read_like_sentrys() -> None:
    grouped = group(error("ZeroDivisionError", "division by zero\nsecond line", HANDLER, LIBRARY))
    assert grouped.title == "ZeroDivisionError: division by zero"
    assert grouped.culprit == "app.pages.orders in checkout"  # the innermost in-app frame, not the library's
    assert (grouped.kind, grouped.level) == ("error", "error")


def test_the_raised_exception_of_a_chain_names_the_issue() -> None:
    event = {"exception": {"values": [{"type": "KeyError", "value": "cause"}, {"type": "RuntimeError", "value": "raised"}]}}
    assert group(event).title == "RuntimeError: raised"


def test_a_log_message_groups_by_its_template() -> None:
    one = group({"logentry": {"message": "cleanup of %s failed", "formatted": "cleanup of a failed"}, "level": "warning"})
    two = group({"logentry": {"message": "cleanup of %s failed", "formatted": "cleanup of b failed"}})
    assert one.fingerprint == two.fingerprint and one.title == "cleanup of a failed" and one.level == "warning"
    assert one.kind == "message"


def test_the_sdks_fingerprint_wins_and_default_stands_for_the_usual_parts() -> None:
    custom = group({**error("KeyError", "x", HANDLER), "fingerprint": ["checkout", 42]})
    assert custom.parts == ("checkout", "42")
    extended = group({**error("KeyError", "x 7", HANDLER), "fingerprint": ["{{ default }}", "tenant-a"]})
    assert extended.parts == ("KeyError", "x <int>", "app.pages.orders in checkout", "tenant-a")


# Fingerprints as stored by every install so far: a change of hashing, joining or normalising would split
# each stored issue in two on upgrade (the old events under the old value, the new ones under another).
PINNED = [
    (error("KeyError", "'user' 42", HANDLER),
     "781e3e7161159d93b1e8eb08602ce7a2fadaea0f4abc55b365d3c8305156abd6"),
    ({"logentry": {"message": "cleanup of %s failed", "formatted": "cleanup of a failed"}},
     "2bd1614eb8ddce62a1f44d550dcff0e34504ba61fcd34c27fa3d076b43ade4ca"),
    ({"transaction": "/checkout"}, "3b15c47be00362731a8c717bf62e767035993d9180cdd58d5ccd8715291c9976"),
    ({**error("KeyError", "x", HANDLER), "fingerprint": ["checkout", 42]},
     "312db6519945f69ea605885b5bd8c1335dd3a100e43b87f116dffb76ed793edf"),
]


@pytest.mark.parametrize("event, fingerprint", PINNED)
def test_a_fingerprint_keeps_its_value_across_versions(event: dict[str, Any], fingerprint: str) -> None:
    assert group(event).fingerprint == fingerprint


def browser_frame(path: str, function: str | None, in_app: bool, page: bool = False, build: str = "b1",
                  column: int = 10) -> dict[str, Any]:
    """A frame as symbolication leaves it: mapped to its original source (app/sourcemaps/symbolicate.py)."""
    data: dict[str, Any] = {"sourcemap": {"debug_id": f"{build}-id", "build_id": build, "resolved_with": "debug_id"}}
    if page:
        data["python_page"] = {"module": "app.pages.try_errors", "function": "page", "file": "app/pages/try_errors.py",
                               "line": 30}
    frame = {"filename": path, "abs_path": path, "lineno": 3, "colno": column, "in_app": in_app, "data": data}
    return frame if function is None else {**frame, "function": function}


def browser_error(*frames: dict[str, Any]) -> dict[str, Any]:
    return {"platform": "javascript", "exception": {"values": [
        {"type": "Error", "value": "Lookout try: a render error", "stacktrace": {"frames": list(frames)}}]}}


ROUTE = ".web/app/routes/[try]._index.jsx"
RUNTIME = ".web/utils/state.js"


def test_a_mapped_stack_names_its_innermost_in_app_original_frame() -> None:
    grouped = group(browser_error(browser_frame(ROUTE, "Component", True, page=True), browser_frame(RUNTIME, "dispatch", False),
                                  browser_frame(".web/app_components/app/pages/try_errors.jsx", "renderBomb", True),
                                  browser_frame(".web/node_modules/react-dom/index.js", "u", False)))
    assert grouped.culprit == ".web/app_components/app/pages/try_errors.jsx in renderBomb"


@pytest.mark.parametrize("function", [None, "<anonymous>"])
def test_an_anonymous_innermost_frame_is_named_by_the_python_page_it_came_from(function: str | None) -> None:
    grouped = group(browser_error(browser_frame(ROUTE, "clicked", True, page=True), browser_frame(RUNTIME, "dispatch", False),
                                  browser_frame(".web/app_components/app/pages/try_errors.jsx", function, True)))
    assert grouped.culprit == "app/pages/try_errors.py in page"


def test_without_a_python_page_an_anonymous_frame_is_named_by_its_file() -> None:
    assert group(browser_error(browser_frame(ROUTE, "<anonymous>", True))).culprit == ROUTE
    unmapped = {"filename": "http://127.0.0.1:3000/assets/x-1.js", "function": "<anonymous>", "in_app": True}
    assert group(browser_error(unmapped)).culprit == "http://127.0.0.1:3000/assets/x-1.js in <anonymous>"  # as before


def test_two_builds_of_one_error_group_together_and_another_place_does_not() -> None:
    def stack(build: str, column: int) -> dict[str, Any]:
        return browser_error(browser_frame(ROUTE, "Component", True, page=True, build=build, column=column),
                             browser_frame(".web/app_components/app/pages/try_errors.jsx", "renderBomb", True,
                                           build=build, column=column))

    one, two = group(stack("b1", 10)), group(stack("b2", 412))
    assert one.fingerprint == two.fingerprint and one.culprit == two.culprit
    elsewhere = browser_error(browser_frame(ROUTE, "Component", True, page=True))
    assert group(elsewhere).fingerprint != one.fingerprint


def test_normalise_replaces_what_varies() -> None:
    text = "user 42 (3f2a9c1e-1b2c-4d5e-8f90-123456789abc, a.b@example.com) at 0xdeadbeef hash 9f86d081884c7d65 x1.5"
    assert normalise(text) == "user <int> (<uuid>, <email>) at <hex> hash <hex> x1.5"
    assert normalise("deadbeef and 3.25") == "deadbeef and <int>"


def test_there_are_190_samples() -> None:
    assert len(SAMPLE_PATHS) == 190


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_gets_a_title_and_a_fingerprint(path: Path) -> None:
    event = json.loads(path.read_text())
    grouped = group(event)
    assert grouped.title and grouped.title != "<unlabeled event>"
    assert len(grouped.fingerprint) == 64 and grouped.parts
    if grouped.kind == "error":
        assert grouped.title.split(":")[0] in json.dumps(event)  # the exception's type, from the event


MIB = 1024 * 1024
# Values that made the e-mail pattern scan again from each character (a run with no "@" in it):
# 20,000 characters took ~1 s and 40,000 ~4 s before patterns were linear; 1 MiB, ~45 minutes.
LONG_VALUES = {
    "word": "a" * MIB,
    "dotted": "a." * (MIB // 2),
    "addresses": "x.y@mail.example, " * (MIB // 18),
    "numbers": "1234 " * (MIB // 5),
}


@pytest.mark.parametrize("shape", LONG_VALUES)
def test_every_value_grouping_reads_is_cut_before_it_is_normalised(shape: str) -> None:
    value = LONG_VALUES[shape]
    expected = normalise(value[:8192])
    assert normalise(value) == expected and "<" not in value[:8192]  # only the first 8,192 characters count
    assert expected == {"word": value[:8192], "dotted": value[:8192], "addresses": "<email>, " * 455 + "x.",
                        "numbers": "<int> " * 1638 + "<int>"}[shape]
    error_event = group({"exception": {"values": [{"type": value, "value": value}]}, "level": value})
    assert error_event.parts[:2] == (value[:256], expected)
    assert len(error_event.title) == 200 and len(error_event.level) == 128
    message = group({"message": value})
    assert message.parts == ("message", expected) and message.title == value[:8192].strip().splitlines()[0][:200]
    assert group({"logentry": {"message": value, "formatted": value}}).parts == ("message", expected)
    frames = {"frames": [{"module": value, "function": value, "in_app": True}]}
    culprit = group({"exception": {"values": [{"type": "E", "value": "v", "stacktrace": frames}]}}).culprit
    assert culprit == f"{value[:256]} in {value[:256]}"[:200]
    assert group({"message": "m", "culprit": value}).culprit == value[:200]
    untitled = group({"transaction": value})
    assert untitled.parts == ("default", value[:200]) and untitled.culprit == value[:200]
    assert group({"message": "m", "fingerprint": [value, value]}).parts == (value[:8192], value[:8192])
