"""The dev overlay's routes (dev mode only), beside the tunnel under its path, for this machine only:

    POST {tunnel_path}/dev/envelope  an envelope, as Spotlight's sidecar takes one (the browser SDK's
                                     copy, or its only report when no DSN is set): kept for the overlay
                                     (dev_inbox.py) and, with SENTRY_SPOTLIGHT, passed on to Spotlight
    GET  {tunnel_path}/dev/events    ?traces=<id>,<id>&after=<seq>: what changed in this tab's traces
    POST {tunnel_path}/dev/clear     {"keys": [...]}: issues the developer dismissed

They answer a request from this machine only (its peer, every X-Forwarded-For address and its Host
loopback, as the tunnel's stats do; Vite's proxy in dev adds X-Forwarded-For), and never a page of
another site (its Origin is refused): the envelopes hold whatever the app's errors held.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from reflex_lookout.dev_inbox import DevInbox
from reflex_lookout.intake import Intake
from reflex_lookout.protocol.asgi import ClientGone, Refused, Request, read_body, refuse, respond
from reflex_lookout.protocol.envelope import serialize
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.tunnel_access import stats_refusal

MAX_TRACES_ASKED = 200
MAX_CLEAR_BYTES = 64 * 1024


class DevRoutes:
    """The three routes in front of `app` (an `api_transformer`); `relay(body)`: Spotlight's, or None."""

    def __init__(self, settings: MonitoringSettings, inbox: DevInbox, root: Path,
                 relay: Callable[[bytes], None] | None = None) -> None:
        self.settings, self.inbox, self.root, self.relay = settings, inbox, root, relay
        self.prefix = f"{settings.tunnel_path}/dev/"
        self.intake = Intake(settings)

    def asgi(self, app: ASGIApp) -> ASGIApp:
        async def serve(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and scope["path"].startswith(self.prefix):
                await self.handle(scope, receive, send)
            else:
                await app(scope, receive, send)

        return serve

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope)
        if (outsider := stats_refusal(scope, request, "")) is not None:
            return await refuse(send, Refused(403 if outsider.status == 403 else 401,
                                              "The dev overlay answers this machine only.", "unauthorized"))
        route, method = scope["path"][len(self.prefix):], scope["method"]
        try:
            if route == "envelope" and method == "POST":
                await self.envelope(request, receive)
                return await respond(send, 200, b"{}")
            if route == "events" and method == "GET":
                return await self.events(scope, send)
            if route == "clear" and method == "POST":
                await self.clear(receive)
                return await respond(send, 200, b"{}")
        except Refused as refused:
            return await refuse(send, refused)
        except ClientGone:
            return None
        await refuse(send, Refused(404, "The dev overlay has no such route.", "not_found"))

    async def envelope(self, request: Request, receive: Receive) -> None:
        raw = await self.intake.body(request, receive)
        parsed = await self.intake.envelope(raw, request.content_encoding)
        await anyio.to_thread.run_sync(self.inbox.add, parsed, "browser")
        if self.relay is not None:  # Spotlight reads plain envelopes
            self.relay(serialize(parsed) if request.content_encoding else raw)

    async def events(self, scope: Scope, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), max_num_fields=4)
        traces = [t for t in ",".join(query.get("traces", [])).split(",") if len(t) == 32][:MAX_TRACES_ASKED]
        after = query.get("after", ["0"])[0]
        answer = self.inbox.answer(traces, int(after) if after.isdigit() and len(after) < 18 else 0)
        answer.update(root=str(self.root), editor=self.settings.editor)
        body = await anyio.to_thread.run_sync(lambda: json.dumps(answer).encode())
        await respond(send, 200, body, [(b"cache-control", b"no-store")])

    async def clear(self, receive: Receive) -> None:
        raw = await read_body(receive, "", MAX_CLEAR_BYTES, self.settings.body_timeout_s)
        try:
            keys = json.loads(raw or b"{}").get("keys", [])
        except (ValueError, AttributeError):
            raise Refused(400, 'The body must be {"keys": [...]}.', "unreadable") from None
        self.inbox.clear(keys if isinstance(keys, list) else [])

