"""An event's exception chain as the issue page shows it, the way Sentry's stack view reads: flat
`StackRow`s (one `rx.foreach` item each, their strings rendered as text, never as HTML).

- The raised exception first, then its cause; under each heading its frames, innermost first.
- In-app frames open: their context lines, numbered from `lineno`, the failing line marked, then
  their local variables (`vars`, as the SDK serialized them: Python's sentry-sdk sends them).
- Consecutive library frames (not in-app) fold into one row, "N library frames", which the page
  opens by its index. A stack with no in-app frame at all folds nothing and opens its innermost
  frame, as Sentry does. Any frame with lines or variables opens or closes by its number (`toggled`).
- Two views: the original frames (`stacktrace`, symbolicated at ingest) and the minified ones as
  the browser sent them (`raw_stacktrace`, kept only when symbolication changed something).
- A frame says why it could not be mapped (`data.sourcemap_error`) and which Python page its
  generated route module comes from (`data.python_page`).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Collection, Iterator
from typing import Any

from app.inbox.grouping import exceptions, frames
from app.presentation.event import display
from app.presentation.words import plural
from app.protocol.fields import text, whole

ORIGINAL, MINIFIED = "original", "minified"
VIEWS = (ORIGINAL, MINIFIED)
MAX_FRAMES = 200  # of each exception
# Rows sent to the page at most (headings, frames and context lines together); the last says more
# were not shown.
MAX_STACK_ROWS = 1000
CONTEXT_AROUND = 5  # lines shown before and after the failing one: 11 at most per frame
MAX_LINE = 200  # characters of a context line shown
MAX_VARS = 50  # local variables shown per frame
MAX_VAR_NAME, MAX_VAR_VALUE = 100, 500  # characters


@dataclasses.dataclass(frozen=True)
class StackRow:
    """One row of the stack view: `kind` is "exception", "fold", "frame", "context", "var" (a local
    variable: `name` and its value in `text`) or "more"."""

    kind: str
    text: str = ""
    number: str = ""  # a context line's number ("" when unknown or below 1)
    marked: bool = False  # the failing line among its context lines
    in_app: bool = False
    fold: int = -1  # the library fold a frame is in, or a fold row opens (-1: none)
    opened: bool = False  # a fold row, or a frame row, shown open
    frame: int = -1  # a frame row's number, to open or close it (-1: nothing to open)
    error: str = ""  # why the frame could not be mapped
    page: str = ""  # the Python page the frame's generated module comes from
    name: str = ""  # a variable's name


MORE = StackRow("more", "(more exceptions and frames not shown)")


def has_minified(event: dict[str, Any]) -> bool:
    """Whether some exception kept the minified frames the browser sent (the switch is offered)."""
    return any(_raw_frames(exception) for exception in exceptions(event))


def stack_rows(event: dict[str, Any], view: str = ORIGINAL, opened: Collection[int] = (),
               toggled: Collection[int] = ()) -> list[StackRow]:
    """The rows of the stack view; `opened` holds the indices of the library folds shown open,
    `toggled` those of the frames opened or closed against their default (frames are numbered
    across the chain, folded ones included, so a number names the same frame whatever is open)."""
    rows: list[StackRow] = []
    for row in _chain_rows(event, view, opened, toggled):
        if len(rows) >= MAX_STACK_ROWS:
            rows.append(MORE)
            break
        rows.append(row)
    return rows


def _chain_rows(event: dict[str, Any], view: str, opened: Collection[int], toggled: Collection[int]) -> Iterator[StackRow]:
    folds = itertools.count()  # fold indices run on across the chain
    numbers = itertools.count()  # and frame numbers
    for exception in reversed(exceptions(event)[-MAX_STACK_ROWS:]):
        kind = display(exception.get("type")) or "Error"
        value = display(exception.get("value"))
        yield StackRow("exception", f"{kind}: {value}" if value else kind)
        stack = list(reversed(_frames_of(exception, view)[-MAX_FRAMES:]))
        if not any(_in_app(frame) for frame in stack):
            for position, frame in enumerate(stack):
                yield from _frame_rows(frame, -1, next(numbers), position == 0, toggled)
            continue
        for in_app, run in itertools.groupby(stack, key=_in_app):
            if in_app:
                for frame in run:
                    yield from _frame_rows(frame, -1, next(numbers), True, toggled)
                continue
            library = list(run)
            fold = next(folds)
            first = next(numbers)
            for _ in library[1:]:
                next(numbers)
            is_open = fold in opened
            label = plural(len(library), "library frame")
            yield StackRow("fold", label, fold=fold, opened=is_open)
            for offset, frame in enumerate(library if is_open else ()):
                yield from _frame_rows(frame, fold, first + offset, False, toggled)


def _frames_of(exception: dict[str, Any], view: str) -> list[dict[str, Any]]:
    """The exception's frames in `view`, outermost first; the minified view falls back to the
    original frames where the browser's were not kept (symbolication changed nothing)."""
    return (view == MINIFIED and _raw_frames(exception)) or frames(exception)


def _raw_frames(exception: dict[str, Any]) -> list[dict[str, Any]]:
    return frames({"stacktrace": exception.get("raw_stacktrace")})


def _in_app(frame: dict[str, Any]) -> bool:
    return frame.get("in_app") is True


def _frame_rows(frame: dict[str, Any], fold: int, number: int, open_by_default: bool,
                toggled: Collection[int]) -> Iterator[StackRow]:
    where = display(frame.get("filename")) or display(frame.get("module")) or display(frame.get("abs_path")) or "?"
    function = display(frame.get("function"))
    title = f"{where} in {function}" if function else where
    line, column = _number(frame.get("lineno")), _number(frame.get("colno"))
    if line is not None:
        title += f" at line {line}" + (f":{column}" if column is not None else "")
    data = frame.get("data")
    data = data if isinstance(data, dict) else {}
    openable = isinstance(frame.get("context_line"), str) or (isinstance(frame.get("vars"), dict) and bool(frame["vars"]))
    is_open = openable and open_by_default != (number in toggled)
    yield StackRow("frame", title, in_app=_in_app(frame), fold=fold, opened=is_open, error=display(data.get("sourcemap_error")),
                   page=_python_page(data.get("python_page")), frame=number if openable else -1)
    if is_open:
        yield from _context_rows(frame, line, fold)
        yield from _var_rows(frame, fold)


def _context_rows(frame: dict[str, Any], line: int | None, fold: int) -> Iterator[StackRow]:
    """Up to CONTEXT_AROUND lines either side of the failing one, each cut at MAX_LINE characters."""
    failing = frame.get("context_line")
    if not isinstance(failing, str):
        return
    before, after = frame.get("pre_context"), frame.get("post_context")
    before = before[-CONTEXT_AROUND:] if isinstance(before, list) else []
    after = after[:CONTEXT_AROUND] if isinstance(after, list) else []
    for offset, source in enumerate([*before, failing, *after], start=-len(before)):
        number = "" if line is None or line + offset < 1 else str(line + offset)
        yield StackRow("context", _source_line(source), number, marked=offset == 0, in_app=_in_app(frame), fold=fold)


def _var_rows(frame: dict[str, Any], fold: int) -> Iterator[StackRow]:
    """The frame's local variables, in the order the SDK sent them, each value as text (a nested
    value as compact JSON), names and values cut to their bounds."""
    found = frame.get("vars")
    if not isinstance(found, dict):
        return
    for name, value in itertools.islice(found.items(), MAX_VARS):
        shown = value if isinstance(value, str) else json.dumps(value, default=str, separators=(", ", ": "))
        yield StackRow("var", _cut(shown, MAX_VAR_VALUE), name=_cut(name, MAX_VAR_NAME), in_app=_in_app(frame), fold=fold)
    if len(found) > MAX_VARS:
        yield StackRow("var", f"{plural(len(found) - MAX_VARS, 'more variable')} not shown", in_app=_in_app(frame), fold=fold)


def _cut(value: Any, limit: int) -> str:
    shown = display(value)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def _source_line(value: Any) -> str:
    found = text(value)[: MAX_LINE + 2].rstrip("\r\n")  # symbolic's lines end with "\n"
    return found if len(found) <= MAX_LINE else found[:MAX_LINE] + "…"


def _python_page(value: Any) -> str:
    """"Python page: app/pages/try_errors.py in page" for a frame of a page's generated code."""
    if not isinstance(value, dict):
        return ""
    where = display(value.get("file")) or display(value.get("module"))
    function = display(value.get("function"))
    if not where:
        return ""
    return f"Python page: {where} in {function}" if function else f"Python page: {where}"


def _number(value: Any) -> int | None:
    return value if whole(value) and value >= 0 else None
