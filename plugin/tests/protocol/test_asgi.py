"""The tunnel's ASGI plumbing: a request's body, bounded in size and in time."""

from __future__ import annotations

import asyncio

import pytest

from reflex_lookout.protocol.asgi import Refused, read_body

pytestmark = pytest.mark.anyio


async def test_a_trickling_body_is_answered_408_when_its_time_is_up() -> None:
    async def receive() -> dict:
        if not sent:
            sent.append(1)
            return {"type": "http.request", "body": b"{", "more_body": True}
        await asyncio.sleep(60)  # the rest never comes
        return {"type": "http.request", "body": b"", "more_body": False}

    sent: list[int] = []
    with pytest.raises(Refused) as refused:
        await read_body(receive, "100", 1000, timeout_s=0.2)
    assert (refused.value.status, refused.value.reason) == (408, "body_timeout")
    assert "did not arrive within 0.2 s" in refused.value.message
