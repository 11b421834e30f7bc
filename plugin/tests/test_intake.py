"""The steps before storing: where the heavy work runs, how many at once, and whose rate counts."""

from __future__ import annotations

import asyncio
import base64
import gzip
import threading
import zlib

import pytest

from plugin_support.concurrency import Peak
from reflex_lookout.intake import HEAVY_AT_ONCE, INLINE_BYTES, Intake
from reflex_lookout.protocol.asgi import Request
from reflex_lookout.settings import MonitoringSettings

pytestmark = pytest.mark.anyio


def where(raw: bytes, content_encoding: str) -> int:
    return threading.get_ident()


async def test_only_a_small_plain_body_is_parsed_on_the_event_loop() -> None:
    intake, loop_thread = Intake(MonitoringSettings.resolve({}, {})), threading.get_ident()
    assert await intake.heavy(where, b"{" * INLINE_BYTES, "") == loop_thread
    assert await intake.heavy(where, b"{" * INLINE_BYTES, "identity") == loop_thread
    assert await intake.heavy(where, b"{" * (INLINE_BYTES + 1), "") != loop_thread
    assert await intake.heavy(where, gzip.compress(b"x"), "gzip") != loop_thread  # it may inflate a thousandfold
    assert await intake.heavy(where, base64.b64encode(zlib.compress(b"{}")), "") != loop_thread  # a legacy /store/ body


async def test_heavy_bodies_are_worked_on_a_few_at_a_time() -> None:
    intake = Intake(MonitoringSettings.resolve({}, {}))
    peak = Peak()

    def work(raw: bytes, content_encoding: str) -> None:
        with peak.inside():
            pass

    await asyncio.gather(*(intake.heavy(work, b"x" * (INLINE_BYTES + 1), "") for _ in range(3 * HEAVY_AT_ONCE)))
    assert peak.most == HEAVY_AT_ONCE


def test_the_client_is_the_peer_or_who_a_proxy_on_this_machine_names() -> None:
    intake = Intake(MonitoringSettings.resolve({}, {}))

    def request(peer: str, *forwarded: bytes) -> Request:
        return Request({"client": (peer, 1), "headers": [(b"x-forwarded-for", line) for line in forwarded]})

    assert intake.client(request("203.0.113.9", b"10.0.0.1")) == "203.0.113.9"  # not a proxy of ours
    assert intake.client(request("127.0.0.1", b"198.51.100.1, 10.0.0.1", b"192.0.2.7")) == "192.0.2.7"
    assert intake.client(request("127.0.0.1")) == "127.0.0.1"


def trickling(first: bytes = b"{") -> tuple[list[int], object]:
    """A receive() whose body starts and then never ends."""
    sent: list[int] = []

    async def receive() -> dict:
        if not sent:
            sent.append(1)
            return {"type": "http.request", "body": first, "more_body": True}
        await asyncio.sleep(60)
        return {"type": "http.request", "body": b"", "more_body": False}

    return sent, receive


async def whole(body: bytes) -> dict:
    return {"type": "http.request", "body": body, "more_body": False}


async def test_a_body_past_its_deadline_is_408_and_the_others_are_read_meanwhile() -> None:
    from reflex_lookout.protocol.asgi import Refused

    intake = Intake(MonitoringSettings.resolve({}, {"LOOKOUT_BODY_TIMEOUT_S": "1"}))
    request = Request({"client": ("127.0.0.1", 1), "headers": [(b"content-length", b"100")]})
    _, receive = trickling()
    slow = asyncio.create_task(intake.body(request, receive))
    for n in range(50):  # read while the slow one waits, each on a task of its own
        assert await asyncio.create_task(intake.body(request, lambda n=n: whole(b"%d" % n))) == b"%d" % n
    assert not slow.done()
    with pytest.raises(Refused) as refused:
        await slow
    assert (refused.value.status, refused.value.reason) == (408, "body_timeout")
    assert "did not arrive within 1 s" in refused.value.message
    assert slow.cancelling() == 0  # the deadline's cancellation is undone: only the 408 is left


async def test_a_body_read_cancelled_from_outside_stays_cancelled() -> None:
    intake = Intake(MonitoringSettings.resolve({}, {}))
    request = Request({"client": ("127.0.0.1", 1), "headers": []})
    _, receive = trickling()
    reading = asyncio.create_task(intake.body(request, receive))
    await asyncio.sleep(0.05)
    reading.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reading


def test_a_small_plain_envelope_is_read_at_once_and_anything_else_is_left_to_the_steps() -> None:
    from reflex_lookout.protocol.envelope import MAX_HEADER_BYTES

    intake = Intake(MonitoringSettings.resolve({}, {}))
    good = b'{"dsn": "http://k@localhost/1", "event_id": "abc"}\n{"type": "event", "length": 2}\n{}\n'
    parsed = intake.small_envelope(good, "")
    assert parsed is not None and parsed.dsn == "http://k@localhost/1" and [i.type for i in parsed.items] == ["event"]
    assert intake.small_envelope(good, "identity") is not None
    assert intake.small_envelope(gzip.compress(good), "gzip") is None  # decoded in the steps, the header line first
    assert intake.small_envelope(good, "br, x-unknown") is None  # 415 is theirs to give
    assert intake.small_envelope(good.replace(b'"length": 2', b'"length": 9'), "") is None  # 400 after the DSN's 403
    # A header line that does not end within MAX_HEADER_BYTES is the header step's 400, whatever it holds.
    long_header = b'{"dsn": "http://k@localhost/1", "pad": "' + b"x" * MAX_HEADER_BYTES + b'"}'
    assert intake.small_envelope(long_header[: MAX_HEADER_BYTES], "") is None
    assert intake.small_envelope(b'{"pad": "' + b"x" * (MAX_HEADER_BYTES - 11) + b'"}', "") is None
