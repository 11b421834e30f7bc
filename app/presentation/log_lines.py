"""A log line as the console shows it: flat strings (rendered as text, never HTML), with links to
its trace and to an error of that trace."""

from __future__ import annotations

import json
from typing import Any

from app import routes


def attributes_text(attributes: str) -> str:
    """`name=value` pairs of a log line's attributes (Sentry sends each as {"value", "type"})."""
    try:
        found = json.loads(attributes)
    except ValueError:
        return ""
    pairs = []
    for name, value in sorted(found.items()) if isinstance(found, dict) else []:
        shown = value.get("value") if isinstance(value, dict) else value
        pairs.append(f"{name}={shown}")
    return " ".join(pairs)


def log_fields(line: dict[str, Any], when: str, issue: int | None = None) -> dict[str, str]:
    """A log line as a row: its time (`when`, as the page says it), level, body, attributes, and links
    to its trace and to `issue` (an issue with an error of that trace)."""
    trace_id = str(line["trace_id"]).lower()
    return {
        "when": when, "level": line["level"], "body": line["body"],
        "attributes": attributes_text(line["attributes"]),
        "trace": f"{routes.TRACE}?id={trace_id}" if trace_id else "",
        "issue": f"{routes.ISSUE}?id={issue}" if issue is not None else "",
    }
