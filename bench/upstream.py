"""The benchmark's stand-in for Sentry, served in a process of its own by granian (1 worker).

    POST /api/{project}/envelope/   reads the body, counts it, answers 200 `{}`
    GET  /count                     {"envelopes": n}: how many envelopes arrived since the last reset
    POST /reset                     sets the count to 0

It should cost as little CPU as possible, since it shares the machine's two cores with the load
generator and the peer under test: no framework, no logging, and granian's own RSGI interface
(`granian --interface rsgi bench.upstream:app`), which skips the ASGI message plumbing. One
worker, so one counter.
"""

from __future__ import annotations

import json
from typing import Any, Protocol


class Scope(Protocol):
    method: str
    path: str


_envelopes = 0
_HEADERS = [("content-type", "application/json")]


async def app(scope: Scope, protocol: Any) -> None:
    global _envelopes
    await protocol()  # the whole request body
    method, path = scope.method, scope.path
    if method == "POST" and path.startswith("/api/") and path.endswith("/envelope/"):
        _envelopes += 1
        protocol.response_bytes(200, _HEADERS, b"{}")
    elif method == "GET" and path == "/count":
        protocol.response_bytes(200, _HEADERS, json.dumps({"envelopes": _envelopes}).encode())
    elif method == "POST" and path == "/reset":
        _envelopes = 0
        protocol.response_bytes(200, _HEADERS, b"{}")
    else:
        protocol.response_bytes(404, _HEADERS, b'{"detail":"not found"}')
