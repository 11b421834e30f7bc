"""CORS for the web API: any origin, never with credentials, as Sentry's API answers. Its only
credential is a token in a header, which no browser adds by itself, so a page of any site may call
it with one (the origin guard lets these paths through: app/origin_guard.py). Outside Reflex's own
CORS layer, which grants with credentials: this one answers the preflight itself and replaces that
layer's grant on the answers."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.webapi.paths import is_web_api_path

PREFLIGHT_HEADERS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"GET, POST, PUT, DELETE, OPTIONS"),
    (b"access-control-allow-headers", b"Authorization, Content-Type, sentry-trace, baggage"),
    (b"access-control-max-age", b"600"),
    (b"content-length", b"0"),
]
GRANT = [(b"access-control-allow-origin", b"*"), (b"access-control-expose-headers", b"Link, X-Hits, X-Max-Hits")]


class WebApiCors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_web_api_path(scope["path"]):
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers", ()))
        if scope["method"] == "OPTIONS" and b"access-control-request-method" in headers:
            await send({"type": "http.response.start", "status": 204, "headers": PREFLIGHT_HEADERS})
            return await send({"type": "http.response.body", "body": b""})

        async def granted(message: Message) -> None:
            if message["type"] == "http.response.start":
                kept = [(k, v) for k, v in message.get("headers", ()) if not bytes(k).lower().startswith(b"access-control-")]
                message = {**message, "headers": [*kept, *GRANT]}
            await send(message)

        await self.app(scope, receive, granted)
