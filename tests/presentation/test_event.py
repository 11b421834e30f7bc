"""Stored events made into display rows: every sample reads; breadcrumbs, tags, contexts and traces
come out in order and bounded (the stack: test_present_stack.py)."""

from __future__ import annotations

import json

import pytest

from app.presentation import event as present
from tests.monitoring.envelopes import SAMPLE_PATHS, SAMPLES

EVENT = {
    "breadcrumbs": {"values": [{"timestamp": 0, "category": "http", "data": {"url": "/x"}}]},
    "tags": {"route": "/orders"}, "release": "shop@2", "contexts": {"os": {"name": "Linux"}},
}


def test_breadcrumbs_tags_and_contexts() -> None:
    assert present.breadcrumb_rows(EVENT) == [
        {"time": "00:00:00", "category": "http", "level": "info", "message": '{"url": "/x"}'}]
    assert present.tag_rows(EVENT) == [("release", "shop@2"), ("route", "/orders")]


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_can_be_shown(path) -> None:
    event = json.loads(path.read_text())
    assert all(isinstance(v, str) for row in present.breadcrumb_rows(event) for v in row.values())
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in present.tag_rows(event))


def test_a_trace_is_one_tree_on_one_timeline() -> None:
    browser = {"transaction": "/try", "start_timestamp": 10.0, "timestamp": 11.0,
               "contexts": {"trace": {"span_id": "a" * 16, "op": "pageload"}},
               "spans": [{"span_id": "b" * 16, "parent_span_id": "a" * 16, "op": "ui.reflex.event",
                          "description": "slow_work", "start_timestamp": 10.2, "timestamp": 10.2}]}
    backend = {"transaction": "TryState.slow_work", "start_timestamp": 10.25, "timestamp": 10.75,
               "contexts": {"trace": {"span_id": "c" * 16, "parent_span_id": "b" * 16, "op": "reflex.event"}},
               "spans": [{"span_id": "d" * 16, "parent_span_id": "c" * 16, "op": "db",
                          "description": "select 1", "start_timestamp": 10.3, "timestamp": 10.4}]}
    rows = present.waterfall_rows([backend, browser])  # any order in, the tree out
    assert [(r["label"], r["indent"]) for r in rows] == [
        ("/try", "0em"), ("slow_work", "1.25em"), ("TryState.slow_work", "2.5em"), ("select 1", "3.75em"),
    ]
    assert (rows[0]["left"], rows[0]["width"], rows[0]["duration"]) == ("0.00%", "100.00%", "1000.0 ms")
    assert (rows[2]["left"], rows[2]["width"]) == ("25.00%", "50.00%")
    assert rows[1]["width"] == "0.30%"  # an instant is still visible
    assert present.waterfall_rows([]) == []


def test_iso_timestamps_as_sentry_python_sends_them_are_placed_too() -> None:
    backend = {"transaction": "handler", "start_timestamp": "2026-11-22T10:00:00.000000Z",
               "timestamp": "2026-11-22T10:00:00.500000Z", "contexts": {"trace": {"span_id": "c" * 16}},
               "spans": [{"span_id": "d" * 16, "parent_span_id": "c" * 16, "description": "select 1",
                          "start_timestamp": "2026-11-22T10:00:00.100000Z", "timestamp": "2026-11-22T10:00:00.200000Z"}]}
    rows = present.waterfall_rows([backend])
    assert [(r["label"], r["duration"], r["left"]) for r in rows] == [
        ("handler", "500.0 ms", "0.00%"), ("select 1", "100.0 ms", "20.00%")]


def test_a_trace_of_100000_nested_spans_is_walked_and_its_first_rows_shown() -> None:
    depth = 100_000
    spans = [{"span_id": f"s{n}", "parent_span_id": f"s{n - 1}" if n else "root", "op": "db", "description": f"q{n}",
              "start_timestamp": 10.0 + n / depth, "timestamp": 11.0} for n in range(depth)]
    transaction = {"transaction": "/deep", "start_timestamp": 10.0, "timestamp": 11.0,
                   "contexts": {"trace": {"span_id": "root"}}, "spans": spans}
    rows = present.waterfall_rows([transaction])
    shown = present.MAX_SPAN_ROWS
    assert len(rows) == shown + 1 and [r["label"] for r in rows[:3]] == ["/deep", "q0", "q1"]
    assert rows[shown - 1]["label"] == f"q{shown - 2}"
    assert rows[shown - 1]["indent"] == f"{present.MAX_INDENT_DEPTH * 1.25:g}em"
    assert rows[-1]["label"] == f"{depth + 1 - shown} more spans not shown"


def test_an_event_shows_a_bounded_number_of_rows_of_each_kind() -> None:
    """A 1 MiB item can hold 100,000 breadcrumbs: the page gets a bounded number."""
    crumbs = [{"message": f"c{n}", "timestamp": 1.0} for n in range(100_000)]
    event = {"breadcrumbs": {"values": crumbs},
             "tags": {f"t{n}": "v" for n in range(10_000)}, "contexts": {f"c{n}": {} for n in range(10_000)}}
    breadcrumbs = present.breadcrumb_rows(event)
    assert len(breadcrumbs) == present.MAX_BREADCRUMBS + 1
    assert breadcrumbs[0]["message"] == f"{100_000 - present.MAX_BREADCRUMBS} older breadcrumbs not shown"
    assert breadcrumbs[-1]["message"] == "c99999"  # the newest kept
    assert len(present.tag_rows(event)) <= present.MAX_PAIRS


def test_spans_whose_parents_form_a_loop_are_still_shown_once() -> None:
    spans = [{"span_id": "a", "parent_span_id": "b", "start_timestamp": 1.0, "timestamp": 2.0, "description": "a"},
             {"span_id": "b", "parent_span_id": "a", "start_timestamp": 1.5, "timestamp": 2.0, "description": "b"},
             {"span_id": "c", "parent_span_id": "c", "start_timestamp": 1.7, "timestamp": 2.0, "description": "c"}]
    rows = present.waterfall_rows([{"contexts": [], "spans": spans}])
    assert [(r["label"], r["indent"]) for r in rows] == [("a", "0em"), ("b", "1.25em"), ("c", "0em")]


def test_sparkline() -> None:
    assert present.sparkline([0, 1, 2, 4]) == " ▂▄█"
    assert present.sparkline([0, 0]) == "  " and present.sparkline([]) == ""
