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

from app.presentation.tags import MAX_PAIRS, display, tag_rows  # noqa: F401 (tag_rows: the pages read it from here)
from app.protocol.fields import seconds

# Rows sent to a page at most: an event or trace may hold far more (100,000 breadcrumbs fit in a
# 1 MiB item), and every row travels over the websocket and is rendered. The last row says how
# many more there are (the stack's bound: MAX_STACK_ROWS in app/presentation/stack.py).
MAX_BREADCRUMBS = 200  # the newest (Sentry's SDKs keep 100)
MAX_SPAN_ROWS = 2000
MAX_INDENT_DEPTH = 40  # deeper spans are drawn at this depth (the row still says where it is on the timeline)


def breadcrumb_rows(event: dict[str, Any]) -> list[dict[str, str]]:
    crumbs = event.get("breadcrumbs")
    values = crumbs.get("values") if isinstance(crumbs, dict) else crumbs
    rows = []
    values = values if isinstance(values, list) else []
    if len(values) > MAX_BREADCRUMBS:
        rows.append({"time": "", "category": "lookout", "level": "info",
                     "message": f"{len(values) - MAX_BREADCRUMBS} older breadcrumbs not shown"})
    for crumb in values[-MAX_BREADCRUMBS:]:
        if not isinstance(crumb, dict):
            continue
        message = display(crumb.get("message")) or (_json(crumb["data"]) if crumb.get("data") else "")
        rows.append({
            "time": _clock(crumb.get("timestamp")),
            "category": display(crumb.get("category")) or display(crumb.get("type")) or "default",
            "level": display(crumb.get("level")) or "info",
            "message": message,
        })
    return rows


def _json(value: Any) -> str:
    return display(json.dumps(value, sort_keys=True, default=str))


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
    span whose parents form a loop is shown as a root."""
    nodes: dict[str, dict[str, Any]] = {}
    order: list[str] = []

    def add(span_id: str, parent: str, start_value: Any, end_value: Any, label: str, op: str, kind: str) -> None:
        start, end = seconds(start_value), seconds(end_value)
        if not span_id or span_id in nodes or start is None:
            return
        finish = end if end is not None and end >= start else start
        nodes[span_id] = {"parent": parent, "start": start, "end": finish, "label": label, "op": op, "kind": kind}
        order.append(span_id)

    for transaction in transactions:
        contexts = transaction.get("contexts")
        trace = contexts.get("trace") if isinstance(contexts, dict) else None
        trace = trace if isinstance(trace, dict) else {}
        add(display(trace.get("span_id")), display(trace.get("parent_span_id")), transaction.get("start_timestamp"),
            transaction.get("timestamp"), display(transaction.get("transaction")), display(trace.get("op")), "transaction")
        spans = transaction.get("spans")
        for span in spans if isinstance(spans, list) else []:
            if isinstance(span, dict):
                add(display(span.get("span_id")), display(span.get("parent_span_id")), span.get("start_timestamp"),
                    span.get("timestamp"), display(span.get("description")) or display(span.get("op")), display(span.get("op")),
                    "span")
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
        rows.append({"label": f"{len(nodes) - len(rows)} more spans not shown", "op": "", "kind": "span",
                     "duration": "", "left": "0.00%", "width": "0.00%", "indent": "0em"})
    return rows


SPARKS = " ▁▂▃▄▅▆▇█"


def sparkline(counts: list[int]) -> str:
    """Counts as a row of block characters, scaled to the largest (a space: none)."""
    peak = max(counts, default=0)
    if peak == 0:
        return SPARKS[0] * len(counts)
    return "".join(SPARKS[0] if c == 0 else SPARKS[max(1, round(c / peak * (len(SPARKS) - 1)))] for c in counts)
