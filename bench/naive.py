"""The naive tunnel the benchmark compares against, after Sentry's documented tunnel example.

Read the body, check the envelope header's DSN, forward it with one module-level
`httpx.AsyncClient()` (default pool), answer upstream's status. Nothing is stored: an envelope is
lost if upstream is down. Served by granian, 1 worker:  granian --interface asgi bench.naive:app
"""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

ALLOWED_DSN = urlsplit(os.environ["SENTRY_DSN"])
client = httpx.AsyncClient()


async def tunnel(request: Request) -> Response:
    body = await request.body()
    dsn = urlsplit(json.loads(body.split(b"\n", 1)[0])["dsn"])
    if (dsn.hostname, dsn.port, dsn.path) != (ALLOWED_DSN.hostname, ALLOWED_DSN.port, ALLOWED_DSN.path):
        return Response(status_code=403)
    url = f"{dsn.scheme}://{dsn.hostname}:{dsn.port}/api/{dsn.path.strip('/')}/envelope/"
    upstream = await client.post(url, content=body, headers={"Content-Type": "application/x-sentry-envelope"})
    return Response(upstream.content, status_code=upstream.status_code)


app = Starlette(routes=[Route("/monitoring", tunnel, methods=["POST"])])
