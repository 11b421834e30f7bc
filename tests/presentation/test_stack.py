"""The stack view's rows: chain and frame order, in-app frames open with numbered context lines and
the failing line marked, library frames folded, the original/minified views, the unmapped reason
and the Python page on a frame, and bounds on everything an event can make large."""

from __future__ import annotations

import json
from dataclasses import fields
from typing import Any

import pytest

from app.presentation import stack as present_stack
from app.presentation.stack import MINIFIED, ORIGINAL, stack_rows
from plugin_support.envelopes import SAMPLE_PATHS, SAMPLES

PYTHON_EVENT = SAMPLES / "sentry" / "python-http-error.json"  # a sentry-python event: requests raised in app code


def frame(name: str, in_app: bool = True, **more: Any) -> dict[str, Any]:
    return {"filename": f"{name}.py", "function": name, "in_app": in_app, **more}


def shape(rows: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(row.kind, row.text) for row in rows]


# A browser error as ingest stores it (Sentry's shape): original frames after symbolication, and
# the minified ones the browser sent.
JS_EVENT: dict[str, Any] = {"platform": "javascript", "exception": {"values": [{
    "type": "Error", "value": "Lookout test error",
    "stacktrace": {"frames": [
        {"filename": "node_modules/react-dom/cjs/react-dom-client.production.js", "function": "processDispatchQueue",
         "lineno": 12010, "colno": 7, "in_app": False, "data": {"sourcemap": {"debug_id": "a" * 8, "build_id": "b1",
                                                                              "resolved_with": "debug_id"}}},
        {"filename": ".web/utils/state.js", "function": "applyEvent", "lineno": 300, "colno": 5, "in_app": False},
        {"filename": ".web/app/routes/[try]._index.jsx", "function": "onClick", "lineno": 42, "colno": 11, "in_app": True,
         "pre_context": ["export function Button() {", "  const go = () => {"],
         "context_line": "    throw new Error(\"Lookout test error\");\n",
         "post_context": ["  };", "  return go;"],
         "data": {"sourcemap": {"debug_id": "c" * 8, "build_id": "b1", "resolved_with": "debug_id"},
                  "python_page": {"module": "app.pages.try_errors", "function": "page",
                                  "file": "app/pages/try_errors.py", "line": 30}}},
        {"filename": "http://127.0.0.1:3000/assets/eval-Ab12.js", "function": "eval", "lineno": 1, "colno": 9,
         "in_app": True, "data": {"sourcemap_error": "No source map for this debug ID."}},
    ]},
    "raw_stacktrace": {"frames": [
        {"filename": "http://127.0.0.1:3000/assets/chunk-XyZ.js", "function": "Ks", "lineno": 1, "colno": 9001,
         "in_app": True},
        {"filename": "http://127.0.0.1:3000/assets/_index-CQSUJ9PM.js", "function": "i", "lineno": 2, "colno": 77,
         "in_app": True},
    ]},
}]}}


def test_the_raised_exception_comes_first_with_its_innermost_frame_first() -> None:
    event = {"exception": {"values": [
        {"type": "KeyError", "value": "'cause'"},
        {"type": "RuntimeError", "value": "raised", "stacktrace": {"frames": [
            {"module": "granian", "function": "serve", "in_app": False},
            {"module": "app.pages.orders", "function": "checkout", "lineno": 12, "in_app": True,
             "context_line": "    raise RuntimeError('raised')"},
        ]}},
    ]}}
    assert shape(stack_rows(event)) == [
        ("exception", "RuntimeError: raised"),
        ("frame", "app.pages.orders in checkout at line 12"),
        ("context", "    raise RuntimeError('raised')"),
        ("fold", "1 library frame"),
        ("exception", "KeyError: 'cause'"),
    ]


def test_a_python_sdk_event_opens_its_app_frames_with_numbered_context_and_folds_the_library() -> None:
    rows = stack_rows(json.loads(PYTHON_EVENT.read_text()))
    assert shape(rows)[:3] == [
        ("exception", "HTTPError: 429 Client Error: Too Many Requests for url: https://slack.com/api/chat.postMessage"),
        ("fold", "1 library frame"),  # requests' raise_for_status, innermost
        ("frame", "sentry/integrations/slack/notify_action.py in send_notification at line 119"),
    ]
    context = [row for row in rows[3:14]]
    assert [row.kind for row in context] == ["context"] * 11
    assert [row.number for row in context] == [str(n) for n in range(114, 125)]
    assert [row.number for row in context if row.marked] == ["119"]
    assert context[5].text == "            resp.raise_for_status()"  # indentation kept
    assert context[4].text == "            resp = session.post('https://slack.com/api/chat.postMessage', data=payload)"
    assert shape(rows)[14] == ("frame", "sentry/utils/safe.py in safe_execute at line 29")
    assert rows[14].in_app and rows[1].fold == 0 and not rows[1].opened
    assert len(rows) == 3 + 11 + 1 + 11


def test_a_browser_event_shows_the_original_frames_with_the_python_page_and_the_unmapped_reason() -> None:
    assert present_stack.has_minified(JS_EVENT)
    rows = stack_rows(JS_EVENT)
    assert shape(rows) == [
        ("exception", "Error: Lookout test error"),
        ("frame", "http://127.0.0.1:3000/assets/eval-Ab12.js in eval at line 1:9"),
        ("frame", ".web/app/routes/[try]._index.jsx in onClick at line 42:11"),
        ("context", "export function Button() {"),
        ("context", "  const go = () => {"),
        ("context", "    throw new Error(\"Lookout test error\");"),  # symbolic's trailing newline dropped
        ("context", "  };"),
        ("context", "  return go;"),
        ("fold", "2 library frames"),
    ]
    unmapped, mapped = rows[1], rows[2]
    assert (unmapped.error, unmapped.page) == ("No source map for this debug ID.", "")
    assert (mapped.error, mapped.page) == ("", "Python page: app/pages/try_errors.py in page")
    assert [(r.number, r.marked) for r in rows[3:8]] == [("40", False), ("41", False), ("42", True), ("43", False), ("44", False)]


def test_the_minified_view_shows_the_frames_the_browser_sent() -> None:
    assert shape(stack_rows(JS_EVENT, MINIFIED)) == [
        ("exception", "Error: Lookout test error"),
        ("frame", "http://127.0.0.1:3000/assets/_index-CQSUJ9PM.js in i at line 2:77"),
        ("frame", "http://127.0.0.1:3000/assets/chunk-XyZ.js in Ks at line 1:9001"),
    ]
    # An exception whose frames symbolication did not change kept none: both views show its frames.
    python = json.loads(PYTHON_EVENT.read_text())
    assert not present_stack.has_minified(python)
    assert stack_rows(python, MINIFIED) == stack_rows(python, ORIGINAL)


def test_library_frames_fold_by_run_and_open_by_index_across_the_chain() -> None:
    stack = [frame("lib_outer", False), frame("main")] + [frame(f"lib{n}", False) for n in range(12)] + [frame("handler")]
    event = {"exception": {"values": [
        {"type": "Cause", "stacktrace": {"frames": [frame("cause_lib", False), frame("cause")]}},
        {"type": "Raised", "stacktrace": {"frames": stack}},
    ]}}
    assert shape(stack_rows(event)) == [
        ("exception", "Raised"), ("frame", "handler.py in handler"), ("fold", "12 library frames"),
        ("frame", "main.py in main"), ("fold", "1 library frame"),
        ("exception", "Cause"), ("frame", "cause.py in cause"), ("fold", "1 library frame"),
    ]
    folds = [row.fold for row in stack_rows(event) if row.kind == "fold"]
    assert folds == [0, 1, 2]
    opened = stack_rows(event, opened={0, 2})
    assert shape(opened)[2:6] == [("fold", "12 library frames"), ("frame", "lib11.py in lib11"),
                                  ("frame", "lib10.py in lib10"), ("frame", "lib9.py in lib9")]
    assert [r.opened for r in opened if r.kind == "fold"] == [True, False, True]
    library = [r for r in opened if r.kind == "frame" and r.fold >= 0]
    assert len(library) == 13 and {r.fold for r in library} == {0, 2} and not any(r.in_app for r in library)
    assert shape(opened)[-2:] == [("fold", "1 library frame"), ("frame", "cause_lib.py in cause_lib")]


def test_a_stack_with_no_app_frame_folds_nothing_and_opens_its_innermost_frame() -> None:
    context = {"pre_context": ["a = 1"], "context_line": "fail()", "post_context": ["b = 2"]}
    event = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [
        frame("outer", False, lineno=5, **context), frame("inner", False, lineno=9, **context)]}}]}}
    assert [(r.kind, r.text, r.number) for r in stack_rows(event)] == [
        ("exception", "E", ""), ("frame", "inner.py in inner at line 9", ""),
        ("context", "a = 1", "8"), ("context", "fail()", "9"), ("context", "b = 2", "10"),
        ("frame", "outer.py in outer at line 5", ""),
    ]


def test_context_lines_are_bounded_and_odd_values_read_as_text() -> None:
    long_line = "x" * 5000
    event = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [frame(
        "f", pre_context=[f"pre{n}" for n in range(50)] + [None, 7], context_line=long_line,
        post_context=[f"post{n}" for n in range(50)], lineno=3)]}}]}}
    context = [r for r in stack_rows(event) if r.kind == "context"]
    assert len(context) == 2 * present_stack.CONTEXT_AROUND + 1 == 11
    assert [r.text for r in context[:5]] == ["pre47", "pre48", "pre49", "", "7"]  # the nearest lines kept
    assert [r.text for r in context[6:]] == [f"post{n}" for n in range(5)]
    assert context[5].text == "x" * present_stack.MAX_LINE + "…"
    assert [r.number for r in context] == ["", "", "", "1", "2", "3", "4", "5", "6", "7", "8"]  # none below 1


def test_a_frame_without_a_context_line_shows_none_and_odd_frame_fields_are_text() -> None:
    event = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [
        {"pre_context": ["orphan"], "lineno": True, "colno": "7", "in_app": "yes", "data": ["not", "a", "dict"]},
        {"function": "g", "in_app": True, "data": {"python_page": {"module": "app.pages.x"}, "sourcemap_error": 12}},
    ]}}]}}
    rows = stack_rows(event)
    assert shape(rows) == [("exception", "E"), ("frame", "? in g"), ("fold", "1 library frame")]
    assert (rows[1].page, rows[1].error) == ("Python page: app.pages.x", "12")
    assert shape(stack_rows(event, opened={0}))[-1] == ("frame", "?")


def test_strings_from_the_event_are_kept_literally() -> None:
    """The rows carry the event's strings unchanged; the page renders them as text (tests/pages)."""
    hostile = '<img src=x onerror="alert(1)">'
    event = {"exception": {"values": [{"type": "<script>", "value": hostile, "stacktrace": {"frames": [frame(
        hostile, context_line=hostile, data={"sourcemap_error": hostile, "python_page": {"file": hostile}})]}}]}}
    rows = stack_rows(event)
    assert rows[0].text == f"<script>: {hostile}"
    assert rows[1].text == f"{hostile}.py in {hostile}" and rows[1].error == hostile
    assert rows[1].page == f"Python page: {hostile}" and rows[2].text == hostile


def test_an_event_shows_a_bounded_number_of_stack_rows() -> None:
    """A 1 MiB item can hold 10,000 exceptions or frames with context: the page gets a bounded number."""
    chain = [{"type": "E", "value": str(n), "stacktrace": {"frames": [frame("f", context_line="x()", lineno=1)] * 3}}
             for n in range(10_000)]
    stack = stack_rows({"exception": {"values": chain}})
    assert len(stack) == present_stack.MAX_STACK_ROWS + 1
    assert stack[0].text == "E: 9999" and stack[-1] == present_stack.MORE
    deep = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [frame(f"f{n}") for n in range(5000)]}}]}}
    frames = [r for r in stack_rows(deep) if r.kind == "frame"]
    assert len(frames) == present_stack.MAX_FRAMES and frames[0].text == "f4999.py in f4999"  # the innermost


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_can_be_shown_in_both_views(path) -> None:
    event = json.loads(path.read_text())
    for view in (ORIGINAL, MINIFIED):
        rows = stack_rows(event, view, opened=range(1000))
        blank = present_stack.StackRow("")  # every field of every row is of its declared type
        assert all(type(getattr(row, f.name)) is type(getattr(blank, f.name)) for row in rows for f in fields(row))


def test_every_app_frame_shows_its_local_variables_after_its_lines() -> None:
    event = {"exception": {"values": [{"type": "ValueError", "value": "bad", "stacktrace": {"frames": [
        frame("lib", False, lineno=1, context_line="call()", vars={"hidden": "1"}),
        frame("outer", lineno=3, context_line="inner(cart)",
              vars={"cart": "{'total': 42}", "items": [1, {"a": None}], "note": "<b>x</b>"}),
        frame("inner", lineno=9, context_line="raise ValueError('bad')", vars={"amount": "42"}),
    ]}}]}}
    assert [(r.kind, r.name, r.text) for r in stack_rows(event) if r.kind != "exception"] == [
        ("frame", "", "inner.py in inner at line 9"), ("context", "", "raise ValueError('bad')"), ("var", "amount", "42"),
        ("frame", "", "outer.py in outer at line 3"), ("context", "", "inner(cart)"),
        ("var", "cart", "{'total': 42}"), ("var", "items", '[1, {"a": null}]'), ("var", "note", "<b>x</b>"),
        ("fold", "", "1 library frame"),
    ]
    library = stack_rows(event, opened={0})[-1]  # the fold opened: its frame, closed, openable by its number
    assert (library.kind, library.text, library.opened, library.frame) == ("frame", "lib.py in lib at line 1", False, 2)
    opened = [(r.kind, r.name, r.text, r.fold) for r in stack_rows(event, opened={0}, toggled={2})][-3:]
    assert opened == [("frame", "", "lib.py in lib at line 1", 0), ("context", "", "call()", 0), ("var", "hidden", "1", 0)]


def test_any_frame_with_lines_opens_and_closes_by_its_number() -> None:
    """A stack the SDK marked no frame of as the app's (a script outside the project root): the
    innermost frame opens, the outer ones open one by one; an open one closes."""
    lines = {"context_line": "f()"}
    event = {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [
        frame("outer", False, lineno=3, vars={"total": "42"}, **lines), frame("bare", False),
        frame("inner", False, lineno=9, **lines)]}}]}}
    shown = [(r.kind, r.text, r.frame, r.opened) for r in stack_rows(event) if r.kind != "exception"]
    assert shown == [("frame", "inner.py in inner at line 9", 0, True), ("context", "f()", -1, False),
                     ("frame", "bare.py in bare", -1, False), ("frame", "outer.py in outer at line 3", 2, False)]
    toggled = [(r.kind, r.name, r.text) for r in stack_rows(event, toggled={0, 2}) if r.kind != "exception"]
    assert toggled == [("frame", "", "inner.py in inner at line 9"), ("frame", "", "bare.py in bare"),
                       ("frame", "", "outer.py in outer at line 3"), ("context", "", "f()"), ("var", "total", "42")]


def test_local_variables_are_bounded() -> None:
    many = {f"v{n}": "x" * 2000 for n in range(60)} | {"n" * 300: "1"}
    [_, _, *variables] = stack_rows({"exception": {"values": [{"type": "E", "stacktrace": {"frames": [
        frame("f", vars=many)]}}]}})
    assert len(variables) == present_stack.MAX_VARS + 1
    assert {len(v.text) for v in variables[:-1]} == {present_stack.MAX_VAR_VALUE + 1}  # and "…"
    assert variables[-1].text == "11 more variables not shown"
    assert stack_rows({"exception": {"values": [{"type": "E", "stacktrace": {"frames": [
        frame("f", vars={"n" * 300: "1"})]}}]}})[-1].name == "n" * present_stack.MAX_VAR_NAME + "…"
