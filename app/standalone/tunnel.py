"""The tunnel, outbox and forwarder as a bare ASGI app (no Reflex, no pages).

Same code and settings as in the Reflex backend; used by the crash test and the benchmark to run
the pipeline in a process of its own:  `uvicorn app.standalone.tunnel:app`.
"""

from __future__ import annotations

from app import startup, wiring
from reflex_lookout.protocol.asgi import Receive, Scope, Send, serve_lifespan

_lookout = wiring.lookout()
_tunnel = _lookout.tunnel.asgi()


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send, startup.prepare_process, _lookout.run_forwarder)
    else:
        await _tunnel(scope, receive, send)
