"""Plain ASGI for the tunnel and the ingest endpoints: the types, what a request is read as, its body
(bounded in size and time), answers and refusals as JSON, and the lifespan protocol."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class Refused(Exception):
    """The request is refused: `status`, a sentence saying why, and the reason counted in stats."""

    def __init__(self, status: int, message: str, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.reason, self.headers = status, message, reason, headers or {}


class ClientGone(Exception):
    """The client disconnected before its body arrived: nothing to answer, nothing stored."""


class Request:
    """What the tunnel reads from an ASGI request: a few headers, its peer, and the body, nothing more."""

    __slots__ = ("origin", "host", "content_length", "content_encoding", "peer", "forwarded_for")

    def __init__(self, scope: Scope) -> None:
        self.origin: str | None = None
        self.host = self.content_length = self.content_encoding = ""
        self.forwarded_for: list[str] = []  # every X-Forwarded-For line (reflex_lookout/protocol/clients.py)
        client = scope.get("client")
        self.peer: str = client[0] if client else ""
        for name, value in scope["headers"]:
            if name == b"origin":
                self.origin = value.decode("latin-1")
            elif name == b"host":
                self.host = value.decode("latin-1")
            elif name == b"content-length":
                self.content_length = value.decode("latin-1")
            elif name == b"content-encoding":
                self.content_encoding = value.decode("latin-1").strip()
            elif name == b"x-forwarded-for":
                self.forwarded_for.append(value.decode("latin-1"))


async def read_body(receive: Receive, declared: str, limit: int, timeout_s: float) -> bytes:
    """The whole request body: 413 over `limit`, 408 when it has not all arrived within `timeout_s`
    (a client trickling a body in holds only its own request, never the others)."""
    if declared.isdigit() and int(declared) > limit:
        raise Refused(413, f"The request body is {declared} bytes; the limit is {limit} bytes.", "too_large")
    try:
        async with asyncio.timeout(timeout_s):
            return await _read_body(receive, limit)
    except TimeoutError:
        raise Refused(408, f"The request body did not arrive within {timeout_s:g} s.", "body_timeout") from None


async def _read_body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        total += len(chunk)
        if total > limit:
            raise Refused(413, f"The request body exceeds the limit of {limit} bytes.", "too_large")
        if not message.get("more_body", False):
            if not chunks:
                return chunk  # the whole body in one message: the usual case, no copy
            chunks.append(chunk)
            return b"".join(chunks)
        chunks.append(chunk)


async def respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] = [],  # noqa: B006 (never mutated)
                  content_type: bytes = b"application/json") -> None:
    await send({
        "type": "http.response.start",
        "status": status,
        "headers": [(b"content-type", content_type), (b"content-length", b"%d" % len(body)), *headers],
    })
    await send({"type": "http.response.body", "body": body})


async def refuse(send: Send, refused: Refused, extra: list[tuple[bytes, bytes]] = []) -> None:  # noqa: B006 (never mutated)
    """Answer `refused`: its status, `{"detail": <its sentence>}`, its headers after `extra`."""
    body = json.dumps({"detail": refused.message}).encode()
    await respond(send, refused.status, body, extra + encoded(refused.headers))


def encoded(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


async def serve_lifespan(
    receive: Receive, send: Send, *tasks: Callable[[], contextlib.AbstractAsyncContextManager[None]]
) -> None:
    """ASGI's lifespan protocol: enter `tasks` in order at start-up, leave them at shutdown."""
    async with contextlib.AsyncExitStack() as running:
        while (message := await receive())["type"] != "lifespan.shutdown":
            if message["type"] == "lifespan.startup":
                for task in tasks:
                    await running.enter_async_context(task())
                await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})
