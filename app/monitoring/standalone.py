"""The tunnel, outbox and forwarder as a bare ASGI app (no Reflex, no pages).

Same code and settings as in the Reflex backend; used by the crash test and the benchmark to run
the pipeline in a process of its own:  `uvicorn app.monitoring.standalone:app`.
"""

from __future__ import annotations

import contextlib

from app import startup
from app.monitoring import pipeline
from app.monitoring.tunnel import Receive, Scope, Send

_tunnel = pipeline.tunnel.asgi()


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] != "lifespan":
        return await _tunnel(scope, receive, send)
    async with contextlib.AsyncExitStack() as running:
        while (message := await receive())["type"] != "lifespan.shutdown":
            if message["type"] == "lifespan.startup":
                await running.enter_async_context(startup.prepare_process())
                await running.enter_async_context(pipeline.run_forwarder())
                await send({"type": "lifespan.startup.complete"})
    await send({"type": "lifespan.shutdown.complete"})
