"""An event's contexts as the issue page shows them, the way Sentry's event page does: one labelled
key–value table per context (browser, os, device, runtime, user, request, trace, culture, app, then any
other), not JSON.

Flat `ContextRow`s (one `rx.foreach` item each, every string rendered as text): a "table" row opens a
context's table, "pair" rows follow it, nested values flattened to dotted keys ("headers.User-Agent",
"frames.0"). Everything is bounded: tables, fields per table, rows in all, nesting depth and the length
of each key and value; a "more" row says what was left out.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.presentation.words import noun
from app.protocol.fields import text

MAX_TABLES = 30
MAX_FIELDS = 100  # pairs per table; also the items read of any one object or array
MAX_ROWS = 1000  # in all
MAX_DEPTH = 5  # deeper values show as "{…}" or "[…]"
MAX_KEY, MAX_VALUE = 200, 1000  # characters
# Sentry's names for the contexts it knows, in the order the page shows them; any other follows by its own name.
LABELS = {
    "browser": "Browser", "os": "Operating System", "device": "Device", "runtime": "Runtime", "user": "User",
    "request": "Request", "trace": "Trace Details", "culture": "Culture", "app": "App", "gpu": "GPU",
    "client_os": "Client Operating System", "response": "Response", "cloud_resource": "Cloud Resource",
    "state": "State", "sdk": "SDK",
}
FIRST = ("browser", "os", "device", "runtime", "user", "request", "trace", "culture", "app")
TOP_LEVEL = ("user", "request", "sdk")  # event fields shown as contexts


@dataclass(frozen=True)
class ContextRow:
    """`kind`: "table" (a context's label: its table starts), "pair" (a key and its value) or "more"
    (`value` says what was not shown)."""

    kind: str
    table: str  # the context's label
    key: str = ""
    value: str = ""


def context_rows(event: dict[str, Any]) -> list[ContextRow]:
    """The event's contexts, `event.user`, `event.request` and `event.sdk`, as labelled tables."""
    rows: list[ContextRow] = []
    tables, complete = _tables(event)
    shown = 0
    for name, value in tables[:MAX_TABLES]:
        label = LABELS.get(name) or _cut(name, MAX_KEY)
        pairs = list(itertools.islice(_pairs(value, "", 0, name not in TOP_LEVEL), MAX_FIELDS + 1))
        if len(rows) + 3 + min(len(pairs), MAX_FIELDS) > MAX_ROWS:  # room kept for the last "more" row
            break
        rows.append(ContextRow("table", label))
        rows += [ContextRow("pair", label, key or "value", text) for key, text in pairs[:MAX_FIELDS]]
        if len(pairs) > MAX_FIELDS:
            rows.append(ContextRow("more", label, value="more fields not shown"))
        shown += 1
    left = len(tables) - shown
    if left or not complete:
        count = f"{left:,} more {noun(left, 'context')}" if complete else "More contexts"
        rows.append(ContextRow("more", "", value=f"{count} not shown"))
    return rows


def _tables(event: dict[str, Any]) -> tuple[list[tuple[str, Any]], bool]:
    """(name, value) per context: the known ones in FIRST's order, then the others as the event lists them;
    whether that is all of them (at most MAX_TABLES * 2 are read)."""
    found: dict[str, Any] = {}
    for name in TOP_LEVEL:
        if event.get(name) not in (None, {}, [], ""):
            found[name] = event[name]
    contexts = event.get("contexts")
    contexts = contexts if isinstance(contexts, dict) else {}
    for name, value in itertools.islice(contexts.items(), MAX_TABLES * 2):
        key = text(name)
        if key and key not in found and value not in (None, {}, [], ""):
            found[key] = value
    rank = {name: position for position, name in enumerate(FIRST)} | {"sdk": len(FIRST) + 1}
    # Sorting is stable: the others keep their order, then the SDK.
    return sorted(found.items(), key=lambda item: rank.get(item[0], len(FIRST))), len(contexts) <= MAX_TABLES * 2


def _pairs(value: Any, prefix: str, depth: int, hide_type: bool = False) -> Iterator[tuple[str, str]]:
    """(dotted key, value as text) for each leaf of `value`; lazy, so a consumer that stops early stops the walk."""
    if isinstance(value, dict) and value and depth < MAX_DEPTH:
        for key, item in itertools.islice(value.items(), MAX_FIELDS + 1):  # one more: the table says there are more
            if not (hide_type and depth == 0 and key == "type" and isinstance(item, str)):  # Sentry hides the context's type
                yield from _pairs(item, _join(prefix, _cut(key, MAX_KEY)), depth + 1)
    elif isinstance(value, list) and value and depth < MAX_DEPTH:
        items = list(itertools.islice(value, MAX_FIELDS + 1))
        as_pairs = all(isinstance(i, (list, tuple)) and len(i) == 2 and isinstance(i[0], str) for i in items)
        for index, item in enumerate(items):  # headers and cookies may come as [name, value] pairs
            key = _cut(item[0], MAX_KEY) if as_pairs else str(index)
            yield from _pairs(item[1] if as_pairs else item, _join(prefix, key), depth + 1)
    else:
        yield _cut(prefix, MAX_KEY), _scalar(value)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "{…}" if value else "{}"
    if isinstance(value, list):
        return "[…]" if value else "[]"
    return _cut(value, MAX_VALUE)


def _cut(value: Any, limit: int) -> str:
    shown = text(value)
    return shown if len(shown) <= limit else shown[:limit] + "…"
