"""A stored event made ready for display: flat rows of plain strings, so that pages render
everything as text (never as HTML) and each row is one `rx.foreach` item.

- `stack_rows`: for each exception of the chain, raised one first, a heading row and its frames,
  innermost first; in-app frames are marked, context lines kept when the SDK sent them.
- `breadcrumb_rows`, `tag_rows`, `context_rows`: the rest of what Sentry's event page shows.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from app.inbox.grouping import exceptions, frames

MAX_FRAMES = 200
MAX_TEXT = 2000


def stack_rows(event: dict[str, Any]) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for exception in reversed(exceptions(event)):
        kind = _text(exception.get("type")) or "Error"
        value = _text(exception.get("value"))
        rows.append({"kind": "exception", "text": f"{kind}: {value}" if value else kind, "detail": "", "in_app": ""})
        for frame in list(reversed(frames(exception)))[:MAX_FRAMES]:
            where = _text(frame.get("module")) or _text(frame.get("filename")) or _text(frame.get("abs_path")) or "?"
            line = f":{frame['lineno']}" if isinstance(frame.get("lineno"), int) else ""
            function = _text(frame.get("function")) or "?"
            rows.append({
                "kind": "frame",
                "text": f"{where}{line} in {function}",
                "detail": _text(frame.get("context_line")).strip(),
                "in_app": "yes" if frame.get("in_app") is True else "",
            })
    return rows


def breadcrumb_rows(event: dict[str, Any]) -> list[dict[str, str]]:
    crumbs = event.get("breadcrumbs")
    values = crumbs.get("values") if isinstance(crumbs, dict) else crumbs
    rows = []
    for crumb in values if isinstance(values, list) else []:
        if not isinstance(crumb, dict):
            continue
        message = _text(crumb.get("message")) or (json.dumps(crumb["data"]) if crumb.get("data") else "")
        rows.append({
            "time": _clock(crumb.get("timestamp")),
            "category": _text(crumb.get("category")) or _text(crumb.get("type")) or "default",
            "level": _text(crumb.get("level")) or "info",
            "message": message,
        })
    return rows


def tag_rows(event: dict[str, Any]) -> list[tuple[str, str]]:
    tags = event.get("tags")
    pairs = tags.items() if isinstance(tags, dict) else tags if isinstance(tags, list) else []
    rows = []
    for pair in pairs:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            rows.append((_text(pair[0]), _text(pair[1])))
    for key in ("environment", "release", "platform", "level", "server_name", "transaction"):
        if event.get(key) not in (None, ""):
            rows.append((key, _text(event[key])))
    return sorted(set(rows))


def context_rows(event: dict[str, Any]) -> list[tuple[str, str]]:
    """One row per context (and request and user): its name and its fields as compact JSON."""
    rows = []
    contexts = event.get("contexts")
    for name, value in (contexts.items() if isinstance(contexts, dict) else []):
        rows.append((_text(name), _json(value)))
    for key in ("request", "user", "sdk"):
        if event.get(key):
            rows.append((key, _json(event[key])))
    return rows


def _json(value: Any) -> str:
    return _text(json.dumps(value, sort_keys=True, default=str))


def _clock(value: Any) -> str:
    try:
        if isinstance(value, (int, float)):
            return datetime.fromtimestamp(value, UTC).strftime("%H:%M:%S")
        if isinstance(value, str):
            return datetime.fromisoformat(value.replace("Z", "+00:00")).strftime("%H:%M:%S")
    except (ValueError, OverflowError, OSError):
        pass
    return ""


def _text(value: Any) -> str:
    text = "" if value is None else value if isinstance(value, str) else str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"
