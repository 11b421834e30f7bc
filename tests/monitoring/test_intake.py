"""The steps before storing: where the heavy work runs, how many at once, and whose rate counts."""

from __future__ import annotations

import asyncio
import base64
import gzip
import threading
import zlib

import pytest

from app.settings import Settings
from reflex_lookout.intake import HEAVY_AT_ONCE, INLINE_BYTES, Intake
from reflex_lookout.protocol.asgi import Request
from tests.concurrency import Peak

pytestmark = pytest.mark.anyio


def where(raw: bytes, content_encoding: str) -> int:
    return threading.get_ident()


async def test_only_a_small_plain_body_is_parsed_on_the_event_loop() -> None:
    intake, loop_thread = Intake(Settings.from_env({})), threading.get_ident()
    assert await intake.heavy(where, b"{" * INLINE_BYTES, "") == loop_thread
    assert await intake.heavy(where, b"{" * INLINE_BYTES, "identity") == loop_thread
    assert await intake.heavy(where, b"{" * (INLINE_BYTES + 1), "") != loop_thread
    assert await intake.heavy(where, gzip.compress(b"x"), "gzip") != loop_thread  # it may inflate a thousandfold
    assert await intake.heavy(where, base64.b64encode(zlib.compress(b"{}")), "") != loop_thread  # a legacy /store/ body


async def test_heavy_bodies_are_worked_on_a_few_at_a_time() -> None:
    intake = Intake(Settings.from_env({}))
    peak = Peak()

    def work(raw: bytes, content_encoding: str) -> None:
        with peak.inside():
            pass

    await asyncio.gather(*(intake.heavy(work, b"x" * (INLINE_BYTES + 1), "") for _ in range(3 * HEAVY_AT_ONCE)))
    assert peak.most == HEAVY_AT_ONCE


def test_the_client_is_the_peer_or_who_a_proxy_on_this_machine_names() -> None:
    intake = Intake(Settings.from_env({}))

    def request(peer: str, *forwarded: bytes) -> Request:
        return Request({"client": (peer, 1), "headers": [(b"x-forwarded-for", line) for line in forwarded]})

    assert intake.client(request("203.0.113.9", b"10.0.0.1")) == "203.0.113.9"  # not a proxy of ours
    assert intake.client(request("127.0.0.1", b"198.51.100.1, 10.0.0.1", b"192.0.2.7")) == "192.0.2.7"
    assert intake.client(request("127.0.0.1")) == "127.0.0.1"
