"""The tunnel and the ingest endpoints in a process of their own, beside a `/ping` route and with the
inbox feeder running, as in the Reflex backend (same pipeline, same settings from the environment):

    uvicorn tests.monitoring.liveness_app:app

tests/monitoring/test_tunnel_liveness.py starts it to see that `/ping` keeps answering while hostile
bodies are being refused.
"""

from __future__ import annotations

from app import startup, wiring
from reflex_lookout.protocol.asgi import Receive, Scope, Send, respond, serve_lifespan


async def ping(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    if scope["path"] == "/ping":
        await respond(send, 200, b'"pong"')
    else:
        await respond(send, 404, b'{"detail":"Not Found"}')


_lookout = wiring.lookout()
_served = _lookout.ingest.asgi(_lookout.tunnel.asgi(ping))


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send, startup.prepare_process, _lookout.run_forwarder, _lookout.run_inbox)
    else:
        await _served(scope, receive, send)
