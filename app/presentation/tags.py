"""An event's tags as (key, value) pairs of bounded text, as the issue page shows the event's own
(app/presentation/event.py; the issue's tag distributions come from the tag index: app/inbox/issue_stats.py)."""

from __future__ import annotations

from typing import Any

from app.protocol.fields import text

MAX_TEXT = 2000
MAX_PAIRS = 200  # tags, contexts


def tag_rows(event: dict[str, Any]) -> list[tuple[str, str]]:
    tags = event.get("tags")
    pairs = tags.items() if isinstance(tags, dict) else tags if isinstance(tags, list) else []
    rows = []
    for pair in pairs:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            rows.append((display(pair[0]), display(pair[1])))
        if len(rows) >= MAX_PAIRS:
            break
    for key in ("environment", "release", "platform", "level", "server_name", "transaction"):
        if event.get(key) not in (None, ""):
            rows.append((key, display(event[key])))
    return sorted(set(rows))


def display(value: Any) -> str:
    """The value as a string, cut at MAX_TEXT characters for display."""
    shown = text(value)
    return shown if len(shown) <= MAX_TEXT else shown[:MAX_TEXT] + "…"
