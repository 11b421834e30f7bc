"""Builds Sentry envelopes for tests."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence


def build(dsn: str | None, items: Sequence[tuple[str, bytes]], with_length: bool = True, **headers: object) -> bytes:
    """An envelope naming `dsn`, with (item type, payload) items."""
    header: dict[str, object] = {"event_id": uuid.uuid4().hex, **headers}
    if dsn is not None:
        header["dsn"] = dsn
    lines = [json.dumps(header).encode()]
    for item_type, payload in items:
        item_header: dict[str, object] = {"type": item_type}
        if with_length:
            item_header["length"] = len(payload)
        lines += [json.dumps(item_header).encode(), payload]
    return b"\n".join(lines) + b"\n"


def error_event(dsn: str | None, message: str = "boom", **headers: object) -> bytes:
    payload = json.dumps({"message": message, "level": "error", "platform": "javascript"}).encode()
    return build(dsn, [("event", payload)], **headers)
