"""What the built app's tunnel stored: in local mode every accepted envelope is an outbox row
with status "local" in the e2e database. Tests read it back, parsed, to see what the SDK sent."""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reflex_lookout.protocol import encodings, envelope


@dataclass(frozen=True)
class Captured:
    """One stored envelope: its header and its items' (type, header, JSON payload)."""

    header: dict[str, Any]
    items: list[tuple[str, dict[str, Any], Any]]

    def payloads(self, item_type: str) -> list[Any]:
        return [payload for kind, _, payload in self.items if kind == item_type]


class Outbox:
    def __init__(self, database: Path) -> None:
        self.database = database

    def mark(self) -> int:
        """The newest row id now: pass it as `after` to see only what comes later."""
        with contextlib.closing(sqlite3.connect(self.database, timeout=10)) as connection:
            return int(connection.execute("select coalesce(max(id), 0) from outbox").fetchone()[0])

    def envelopes(self, after: int = 0) -> list[Captured]:
        with contextlib.closing(sqlite3.connect(self.database, timeout=10)) as connection:
            rows = connection.execute(
                "select body, content_encoding from outbox where id > ? order by id", (after,)
            ).fetchall()
        return [parse_envelope(encodings.decode(body, encoding, 100 * 2**20)) for body, encoding in rows]

    def items(self, item_type: str, after: int = 0) -> list[Any]:
        return [payload for captured in self.envelopes(after) for payload in captured.payloads(item_type)]

    def wait_for(self, item_type: str, match: Callable[[Any], bool], after: int, timeout: float = 15) -> list[Any]:
        """The items of `item_type` stored after `after` that `match`; waits until there is one."""
        deadline = time.monotonic() + timeout
        while True:
            found = [item for item in self.items(item_type, after) if match(item)]
            if found or time.monotonic() > deadline:
                return found
            time.sleep(0.2)


def parse_envelope(body: bytes) -> Captured:
    parsed = envelope.parse(body, 100 * 2**20)
    items = []
    for item in parsed.items:
        try:
            payload = json.loads(item.payload)
        except ValueError:
            payload = item.payload
        items.append((item.type, item.headers, payload))
    return Captured(parsed.headers, items)


def messages(event: dict[str, Any]) -> list[str]:
    """An error event's exception values and message, as the SDK sent them."""
    values = [value.get("value", "") for value in (event.get("exception") or {}).get("values", [])]
    message = event.get("message")
    if isinstance(message, dict):
        message = message.get("formatted") or message.get("message")
    return values + ([message] if message else [])
