"""The outermost ASGI middleware: pages of other sites get nothing from Lookout.

Reflex wraps every route in a CORS layer that grants any origin, with credentials, and its
socket.io server accepts any origin; a page of another site, open in a browser that can reach
Lookout, could read the console's API and drive the console's websocket. This guard runs before
both (`LookoutApp` in app/app.py puts it outside everything Reflex builds) and refuses every
request, websocket handshake included, whose `Origin` is sent and is not the app's own
(`app/console/access.py`): 403 with `{"detail": ...}`, and no CORS grant.

Three kinds of path are open to every origin, as with Sentry: the ingest endpoints
(`/api/<project>/envelope/`, `/store/`, `/security/`), whose credential is the DSN key, the tunnel
(LOOKOUT_TUNNEL_PATH), which checks origins itself against LOOKOUT_TUNNEL_ALLOWED_ORIGINS (both
answer their own CORS), and Sentry's API (`/api/0/...`: sentry-cli's upload API and the web API,
app/webapi/cors.py), whose only credential is a token sent in a header, never one a browser adds by itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from app.console import access
from app.ingest.endpoints import PATH as INGEST_PATH
from app.ingest.security_reports import PATH as SECURITY_PATH
from app.settings import SETTINGS
from app.sourcemaps.upload_api import is_upload_path
from app.webapi.paths import is_web_api_path

REFUSAL = json.dumps({"detail": "Pages of other sites may not use Lookout (their Origin is not this app's)."}).encode()
_HEADERS = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(REFUSAL))]


def open_to_every_origin(path: str) -> bool:
    """The tunnel, the ingest endpoints, the upload API and the web API: the paths whose own checks
    decide who may post."""
    return (path == SETTINGS.tunnel_path or INGEST_PATH.match(path) is not None
            or SECURITY_PATH.match(path) is not None or is_upload_path(path) or is_web_api_path(path))


class OriginGuard:
    def __init__(self, app: ASGIApp, open_path: Callable[[str], bool] = open_to_every_origin,
                 site: access.Site | None = None) -> None:
        self.app, self.open_path, self.site = app, open_path, site

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (scope["type"] in ("http", "websocket") and not self.open_path(scope["path"])
                and access.foreign_origin(access.Caller.from_scope(scope), self.site)):
            return await (_refuse_http(send) if scope["type"] == "http" else _refuse_websocket(scope, send))
        await self.app(scope, receive, send)


async def _refuse_http(send: Send) -> None:
    await send({"type": "http.response.start", "status": 403, "headers": _HEADERS})
    await send({"type": "http.response.body", "body": REFUSAL})


async def _refuse_websocket(scope: Scope, send: Send) -> None:
    """Refuse the handshake: with a 403 and the sentence where the server can send one (ASGI's
    websocket denial extension), else by closing it before it is accepted (also a 403)."""
    if "websocket.http.response" in scope.get("extensions", {}):
        await send({"type": "websocket.http.response.start", "status": 403, "headers": _HEADERS})
        await send({"type": "websocket.http.response.body", "body": REFUSAL})
    else:
        await send({"type": "websocket.close", "code": 1008})
