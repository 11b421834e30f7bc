"""What the tunnel's tests share: waiting without blocking the event loop, settings naming a real
upstream, a transport that keeps what sentry-sdk sends, and outbox rows."""

from __future__ import annotations

import dataclasses

from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport

from plugin_support.upstream import Upstream
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import PENDING
from reflex_lookout.settings import MonitoringSettings


def sentry_settings(upstream: Upstream, **changes: object) -> MonitoringSettings:
    dsn = Dsn.parse(f"http://public@127.0.0.1:{upstream.port}/42")
    # The tunnel's stats on, as in Lookout's settings (the tests read them), whose other fields the tunnel never reads.
    base = dataclasses.replace(MonitoringSettings.resolve({}, {}), tunnel_stats=True)
    fast = {"retry_base_s": 0.05, "retry_max_s": 0.2, "forward_timeout_s": 2.0}
    return dataclasses.replace(base, dsn=dsn, **{**fast, **changes})


async def until(condition, timeout: float = 15) -> None:
    """Wait, without blocking the event loop (the forwarder runs on it), until `condition()`."""
    import asyncio

    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def accepted(upstream: Upstream, count: int, timeout: float = 15) -> list:
    await until(lambda: len(upstream.accepted) >= count, timeout)
    return upstream.accepted


class CapturingTransport(Transport):
    """Keeps every envelope sentry-sdk hands over (as sentry-sdk's own test-suite does)."""

    def __init__(self, options: dict | None = None) -> None:
        super().__init__(options)
        self.envelopes: list[Envelope] = []

    def capture_envelope(self, envelope: Envelope) -> None:
        self.envelopes.append(envelope)

    def items(self, item_type: str) -> list[dict]:
        return [item.payload.json for envelope in self.envelopes for item in envelope.items if item.type == item_type]


def row(dsn: str = "d1", status: str = PENDING, body: bytes = b"envelope", **extra: object) -> dict[str, object]:
    return {"dsn": dsn, "status": status, "received_at": 0.0, "content_encoding": "", "categories": "error",
            "event_id": None, "size": len(body), "body": body, **extra}
