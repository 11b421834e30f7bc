"""The tunnel, outbox and forwarder as a bare ASGI app (no Reflex, no pages).

Same code and settings as in the Reflex backend; used by the crash test and the benchmark to run
the pipeline in a process of its own:  `uvicorn app.monitoring.standalone:app`.
"""

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette

from app import startup
from app.monitoring import pipeline


@contextlib.asynccontextmanager
async def lifespan(_app: Starlette) -> AsyncIterator[None]:
    async with startup.prepare_process(), pipeline.run_forwarder():
        yield


app = Starlette(routes=pipeline.tunnel.routes, lifespan=lifespan)
