"""Builds Sentry envelopes for tests, and finds the shared sample events."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

# 190 real events from many SDKs, in `../shared` beside the checkout (as CI lays it out).
SAMPLES = Path(__file__).resolve().parents[4] / "shared" / "fixtures" / "event-samples"
SAMPLE_PATHS = sorted(SAMPLES.rglob("*.json"))


def header_line(value: dict[str, object]) -> bytes:
    """One header line's JSON, compact, as SDKs write it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def assemble(headers: dict[str, object], items: Iterable[tuple[dict[str, object], bytes]]) -> bytes:
    """An envelope in the canonical form: every header and payload ends with `\\n`."""
    lines = [header_line(headers)]
    for item_headers, payload in items:
        lines += [header_line(item_headers), payload]
    return b"\n".join(lines) + b"\n"


def build(dsn: str | None, items: Sequence[tuple[str, bytes]], with_length: bool = True, **headers: object) -> bytes:
    """An envelope naming `dsn` (with a fresh event id), with (item type, payload) items."""
    envelope_headers: dict[str, object] = {"event_id": uuid.uuid4().hex, **headers}
    if dsn is not None:
        envelope_headers["dsn"] = dsn
    return assemble(
        envelope_headers,
        [({"type": t, "length": len(p)} if with_length else {"type": t}, p) for t, p in items],
    )


def error_event(dsn: str | None, message: str = "boom", **headers: object) -> bytes:
    payload = json.dumps({"message": message, "level": "error", "platform": "javascript"}).encode()
    return build(dsn, [("event", payload)], **headers)
