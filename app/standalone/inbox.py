"""The inbox as a bare ASGI app (no Reflex, no pages): the tunnel and Sentry's ingest endpoints (security reports too),
sentry-cli's upload API (app/sourcemaps/upload_api.py), Sentry's web API (app/webapi), the outbox, the feeder that reads it into
the inbox and the alert sender, in local mode (no SENTRY_DSN). Same code and settings as in the
Reflex backend; used by the alerts' crash test and latency benchmark, and by the upload tests, to
run in a process of its own:  `granian --interface asgi app.standalone.inbox:app`.
"""

from __future__ import annotations

from app import startup, wiring
from app.webapi.cors import WebApiCors
from reflex_lookout.protocol.asgi import Receive, Scope, Send, serve_lifespan

_lookout = wiring.lookout()
_uploads = _lookout.upload_api()
_uploads.mount("", _lookout.security.asgi(_lookout.ingest.asgi(_lookout.tunnel.asgi())))  # anything else: 404
_served = WebApiCors(_lookout.web_api()(_uploads))  # Sentry's web API (app/webapi) in front


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send, startup.prepare_process, _lookout.run_inbox)
    else:
        await _served(scope, receive, send)
