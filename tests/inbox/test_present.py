"""Stored events made into display rows: every sample reads, chains and frames come out in order."""

from __future__ import annotations

import json

import pytest

from app.inbox import present
from tests.monitoring.envelopes import SAMPLE_PATHS, SAMPLES

EVENT = {
    "exception": {"values": [
        {"type": "KeyError", "value": "'cause'"},
        {"type": "RuntimeError", "value": "raised", "stacktrace": {"frames": [
            {"module": "granian", "function": "serve", "in_app": False},
            {"module": "app.pages.orders", "function": "checkout", "lineno": 12, "in_app": True,
             "context_line": "    raise RuntimeError('raised')"},
        ]}},
    ]},
    "breadcrumbs": {"values": [{"timestamp": 0, "category": "http", "data": {"url": "/x"}}]},
    "tags": {"route": "/orders"}, "release": "shop@2", "contexts": {"os": {"name": "Linux"}},
}


def test_the_raised_exception_comes_first_with_its_innermost_frame_first() -> None:
    rows = present.stack_rows(EVENT)
    assert [(r["kind"], r["text"]) for r in rows] == [
        ("exception", "RuntimeError: raised"),
        ("frame", "app.pages.orders:12 in checkout"),
        ("frame", "granian in serve"),
        ("exception", "KeyError: 'cause'"),
    ]
    assert rows[1]["in_app"] == "yes" and rows[1]["detail"] == "raise RuntimeError('raised')" and rows[2]["in_app"] == ""


def test_breadcrumbs_tags_and_contexts() -> None:
    assert present.breadcrumb_rows(EVENT) == [{"time": "00:00:00", "category": "http", "level": "info", "message": '{"url": "/x"}'}]
    assert present.tag_rows(EVENT) == [("release", "shop@2"), ("route", "/orders")]
    assert present.context_rows(EVENT) == [("os", '{"name": "Linux"}')]


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_can_be_shown(path) -> None:  # noqa: ANN001
    event = json.loads(path.read_text())
    rows = present.stack_rows(event)
    assert all(isinstance(v, str) for row in rows for v in row.values())
    assert all(isinstance(v, str) for row in present.breadcrumb_rows(event) for v in row.values())
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in present.tag_rows(event) + present.context_rows(event))
