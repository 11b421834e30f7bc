"""A stored event made ready for display: flat rows of plain strings, so that pages render
everything as text (never as HTML) and each row is one `rx.foreach` item.

- The exception chain and its frames: app/presentation/stack.py.
- `breadcrumb_rows`, `tag_rows` (app/presentation/tags.py): the rest of what Sentry's event page shows;
  its contexts: app/presentation/contexts.py.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app.presentation.reflex_events import is_internal, short_name
from app.presentation.tags import MAX_PAIRS, MAX_TEXT, display, tag_rows  # noqa: F401 (tag_rows: the pages read it from here)
from app.presentation.words import plural
from app.protocol.fields import mapping, seconds

# Rows sent to a page at most: an event or trace may hold far more (100,000 breadcrumbs fit in a
# 1 MiB item), and every row travels over the websocket and is rendered. The last row says how
# many more there are (the stack's bound: MAX_STACK_ROWS in app/presentation/stack.py).
MAX_BREADCRUMBS = 200  # the newest (Sentry's SDKs keep 100)
MAX_SPAN_ROWS = 2000
# A span's status that is not a failure (Sentry's span statuses; none sent: not a failure either).
OK_STATUSES = ("", "ok", "unset")
MAX_INDENT_DEPTH = 40  # deeper spans are drawn at this depth (the row still says where it is on the timeline)
# Breadcrumbs summed up as requests: `type: "http"`, or these categories (the browser SDK's and
# sentry-python's); their method and status under the browser SDK's keys, or sentry-python 2's.
HTTP_CATEGORIES = {"xhr", "fetch", "http", "httplib"}
METHOD_KEYS = ("method", "http.method", "http.request.method")
STATUS_KEYS = ("status_code", "http.response.status_code")
# A console method's level as Sentry names levels ("log" is one of them).
CONSOLE_LEVELS = {"warn": "warning", "assert": "error"}


def breadcrumb_rows(event: dict[str, Any]) -> list[dict[str, str]]:
    """The newest MAX_BREADCRUMBS breadcrumbs as rows {time, type, category, level, message}, each
    message summed up as Sentry's issue page does it (`_summary`)."""
    crumbs = event.get("breadcrumbs")
    values = crumbs.get("values") if isinstance(crumbs, dict) else crumbs
    rows = []
    values = values if isinstance(values, list) else []
    if len(values) > MAX_BREADCRUMBS:
        rows.append({"time": "", "type": "default", "category": "lookout", "level": "info",
                     "message": f"{plural(len(values) - MAX_BREADCRUMBS, 'older breadcrumb')} not shown"})
    for crumb in values[-MAX_BREADCRUMBS:]:
        if isinstance(crumb, dict):
            rows.append(_breadcrumb_row(crumb))
    return rows


def _breadcrumb_row(crumb: dict[str, Any]) -> dict[str, str]:
    kind = display(crumb.get("type")) or "default"
    category = display(crumb.get("category"))
    level = display(crumb.get("level"))
    if category == "console":  # older SDKs put the console method's level in the data
        level = level or display(mapping(crumb.get("data")).get("level"))
        level = CONSOLE_LEVELS.get(level, level)
    return {"time": _clock(crumb.get("timestamp")), "type": kind, "category": category or kind,
            "level": level or "info", "message": _summary(crumb, kind, category)}


def _summary(crumb: dict[str, Any], kind: str, category: str) -> str:
    """A request as `GET /api/cart [200]`, a navigation as `/a → /b`, a console call as its text; any
    other breadcrumb as its message, else its data as `key=value` pairs. A kind whose data lacks what
    it needs falls back to the message, then to the pairs."""
    data = crumb.get("data")
    fields = mapping(data)
    message = display(crumb.get("message"))
    summary = ""
    if kind == "http" or category in HTTP_CATEGORIES:
        method, status = _first(fields, METHOD_KEYS), _first(fields, STATUS_KEYS)
        summary = _joined([method, _scalar(fields.get("url")), f"[{status}]" if status else ""])
    elif category == "navigation":
        source, target = _scalar(fields.get("from")), _scalar(fields.get("to"))
        summary = display(f"{source} → {target}".strip()) if source or target else ""
    elif category == "console" and "arguments" in fields:  # the call's text, even when empty
        found = fields["arguments"]
        found = found if isinstance(found, list) else [] if found is None else [found]
        return message or _joined([_argument(value) for value in found])
    return summary or message or _pairs(data)


def _first(fields: dict[str, Any], names: tuple[str, ...]) -> str:
    """The first of the fields named that is a string or number, as text."""
    return next((found for found in (_scalar(fields.get(name)) for name in names) if found), "")


def _scalar(value: Any) -> str:
    """A string or number as text ("" for anything else: null, true, an object, an array)."""
    if isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return display(value)
    return ""


def _argument(value: Any) -> str:
    """A console argument as the browser would print it: a string as it is, anything else as JSON."""
    return display(value) if isinstance(value, str) else _json(value)


def _joined(parts: list[str]) -> str:
    """The parts that are not empty, joined by spaces and cut for display."""
    return display(" ".join(part for part in parts if part))


def _pairs(data: Any) -> str:
    """An object as `key=value` pairs by key (a value with spaces, or not a string, as JSON); any
    other data as JSON. Stops once past what display() keeps."""
    if not data:
        return ""
    if not isinstance(data, dict):
        return _scalar(data) or _json(data)
    pairs: list[str] = []
    length = 0
    for key in sorted(data, key=str):
        value = data[key]
        shown = value if isinstance(value, str) and value and not any(c.isspace() for c in value) else _json(value)
        pairs.append(f"{display(key)}={shown}")
        length += len(pairs[-1]) + 1
        if length > MAX_TEXT:
            break
    return display(" ".join(pairs))


def _json(value: Any) -> str:
    """Compact JSON, cut for display (the text of what cannot be written as JSON)."""
    try:
        return display(json.dumps(value, sort_keys=True, default=str, separators=(",", ":"), ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return display(value)


def _clock(value: Any) -> str:
    at = seconds(value)
    try:
        return "" if at is None else datetime.fromtimestamp(at, UTC).strftime("%H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return ""


def waterfall_rows(transactions: list[dict[str, Any]]) -> list[dict[str, str]]:
    """A trace's transactions and spans as one tree, each row placed on the trace's timeline:
    `left` and `width` in percent of the whole trace, `depth` its nesting. Walked with a stack of
    its own, not by recursion, so any depth is shown (Python's recursion stopped near 1,000); a
    span whose parents form a loop is shown as a root. `kind`: "transaction", "span", or "internal"
    (a transaction of Reflex's own plumbing, drawn as a span: app/presentation/reflex_events.py)."""
    nodes: dict[str, dict[str, Any]] = {}
    order: list[str] = []

    def add(span_id: str, parent: str, start_value: Any, end_value: Any, label: str, op: str, kind: str,
            status: Any) -> None:
        start, end = seconds(start_value), seconds(end_value)
        if not span_id or span_id in nodes or start is None:
            return
        finish = end if end is not None and end >= start else start
        nodes[span_id] = {"parent": parent, "start": start, "end": finish, "label": label, "op": op, "kind": kind,
                          "failed": display(status) not in OK_STATUSES}
        order.append(span_id)

    for transaction in transactions:
        contexts = transaction.get("contexts")
        trace = contexts.get("trace") if isinstance(contexts, dict) else None
        trace = trace if isinstance(trace, dict) else {}
        name, op = display(transaction.get("transaction")), display(trace.get("op"))
        # A Reflex handler by its class and function; Reflex's own plumbing drawn as a span, not as the app's work.
        add(display(trace.get("span_id")), display(trace.get("parent_span_id")), transaction.get("start_timestamp"),
            transaction.get("timestamp"), short_name(name, op), op, "internal" if is_internal(name, op) else "transaction",
            trace.get("status"))
        spans = transaction.get("spans")
        for span in spans if isinstance(spans, list) else []:
            if isinstance(span, dict):
                add(display(span.get("span_id")), display(span.get("parent_span_id")), span.get("start_timestamp"),
                    span.get("timestamp"), display(span.get("description")) or display(span.get("op")), display(span.get("op")),
                    "span", span.get("status"))
    if not nodes:
        return []
    begin = min(n["start"] for n in nodes.values())
    length = max(max(n["end"] for n in nodes.values()) - begin, 1e-6)
    children: dict[str, list[str]] = {}
    for span_id in order:
        children.setdefault(nodes[span_id]["parent"], []).append(span_id)
    rows: list[dict[str, str]] = []
    shown: set[str] = set()

    def by_start(span_ids: list[str]) -> list[str]:
        return sorted(span_ids, key=lambda s: nodes[s]["start"])

    def walk(root: str) -> None:
        todo = [(root, 0)]  # a stack: the next row on top, its siblings below it
        while todo and len(rows) < MAX_SPAN_ROWS:
            span_id, depth = todo.pop()
            if span_id in shown:
                continue
            shown.add(span_id)
            node = nodes[span_id]
            rows.append({
                "label": node["label"] or "(unnamed)", "op": node["op"], "kind": node["kind"],
                "failed": "yes" if node["failed"] else "",
                "duration": f"{(node['end'] - node['start']) * 1000:.1f} ms",
                "left": f"{(node['start'] - begin) / length * 100:.2f}%",
                "width": f"{max((node['end'] - node['start']) / length * 100, 0.3):.2f}%",
                "indent": f"{min(depth, MAX_INDENT_DEPTH) * 1.25:g}em",
            })
            todo.extend((child, depth + 1) for child in reversed(by_start(children.get(span_id, []))))

    for root in by_start([s for s in order if nodes[s]["parent"] not in nodes]):
        walk(root)
    for span_id in by_start([s for s in order if s not in shown]):  # parents in a loop: no root leads there
        walk(span_id)
    if len(nodes) > len(rows):
        rows.append({"label": f"{plural(len(nodes) - len(rows), 'more span')} not shown", "op": "", "kind": "span", "failed": "",
                     "duration": "", "left": "0.00%", "width": "0.00%", "indent": "0em"})
    return rows


SPARKS = " ▁▂▃▄▅▆▇█"


def sparkline(counts: list[int]) -> str:
    """Counts as a row of block characters, scaled to the largest (a space: none)."""
    peak = max(counts, default=0)
    if peak == 0:
        return SPARKS[0] * len(counts)
    return "".join(SPARKS[0] if c == 0 else SPARKS[max(1, round(c / peak * (len(SPARKS) - 1)))] for c in counts)
