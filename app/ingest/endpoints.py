"""Sentry's standard ingest endpoints, for any SDK configured with a Lookout DSN
(`http://<public key>@<this host>:<port>/<project id>`), in local mode:

    POST /api/<project_id>/envelope/   an envelope
    POST /api/<project_id>/store/      one event as JSON (the older protocol), plain or wrapped in
                                       base64 and zlib as legacy clients send it
    GET  /api/<project_id>/store/?sentry_data=...  the same event in the query, answered with a GIF

The key comes from one of Sentry's auth forms (app/protocol/auth.py), or the envelope
header's `dsn` (read from the header line alone), and must be the project's: it is
checked before the body is decoded or parsed. The same steps as the tunnel's follow
(reflex_lookout/intake.py: the client's and the key's rates, caps, encodings, envelope
validation, heavy work off the event loop); an accepted envelope is committed to the outbox
through the tunnel (so the feeder reads it into the inbox) before the answer, filtered and scrubbed
under its project's options first (app/ingest/before_write.py, which this gives the tunnel: its
browser envelopes and the server SDK's pass through it as well). A /store/ event is
decoded no further than the item cap (app/protocol/legacy_store.py). Any origin may post: the DSN
is the credential, as with Sentry. With a SENTRY_DSN set there is no inbox, and these paths say so.
"""

from __future__ import annotations

import json
import re
import uuid

import anyio.to_thread

from app.ingest.before_write import BeforeWrite
from app.ingest.incoming import UnknownProject
from app.ingest.store import InboxStore
from app.protocol import auth, legacy_store
from app.settings import Settings
from reflex_lookout.dsn import Dsn
from reflex_lookout.intake import unreadable
from reflex_lookout.protocol import encodings, envelope, payloads
from reflex_lookout.protocol.asgi import ASGIApp, ClientGone, Receive, Refused, Request, Scope, Send, encoded, respond
from reflex_lookout.settings_error import SettingsError
from reflex_lookout.tunnel import Tunnel

PATH = re.compile(r"^/api/(\d+)/(envelope|store)/?$")
CORS = [
    (b"access-control-allow-origin", b"*"),
    (b"access-control-allow-methods", b"POST, OPTIONS"),
    (b"access-control-allow-headers", b"Content-Type, Content-Encoding, X-Sentry-Auth, Authorization"),
    (b"access-control-max-age", b"86400"),
]


class Ingest:
    def __init__(self, tunnel: Tunnel, inbox: InboxStore) -> None:
        self.tunnel = tunnel
        self.inbox = inbox
        if not isinstance(tunnel.settings, Settings):  # the plugin's tunnel, built with Lookout's settings
            raise TypeError("Lookout's ingest needs a tunnel built with app.settings.Settings.")
        self.settings = tunnel.settings
        if self.settings.dsn is None:  # local mode: nothing is written before it is filtered and scrubbed
            tunnel.prepare = BeforeWrite(inbox)
        self._known: dict[tuple[int, str], str] = {}  # (project id, key) found in the database → its DSN

    def asgi(self, app: ASGIApp) -> ASGIApp:
        """Serves the ingest paths and hands everything else to `app` (an `api_transformer`)."""

        async def serve(scope: Scope, receive: Receive, send: Send) -> None:
            found = PATH.match(scope["path"]) if scope["type"] == "http" else None
            if found is None:
                return await app(scope, receive, send)
            await self.handle(int(found[1]), found[2], scope, receive, send)

        return serve

    async def handle(self, project_id: int, kind: str, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": CORS})
            return await send({"type": "http.response.body", "body": b""})
        pixel = scope["method"] == "GET" and kind == "store"
        if scope["method"] != "POST" and not pixel:
            return await respond(send, 405, b'{"detail":"Use POST."}', [(b"allow", b"POST, OPTIONS"), *CORS])
        try:
            event_id = await self.accept(project_id, kind, scope, receive)
        except Refused as refused:
            self.tunnel.stats.reject(refused.reason)
            body = json.dumps({"detail": refused.message}).encode()
            return await respond(send, refused.status, body, [*CORS, *encoded(refused.headers)])
        except ClientGone:
            return None
        if pixel:
            return await respond(send, 200, legacy_store.PIXEL, CORS, content_type=b"image/gif")
        await respond(send, 200, json.dumps({"id": event_id}).encode(), CORS)

    async def accept(self, project_id: int, kind: str, scope: Scope, receive: Receive) -> str | None:
        if self.settings.dsn is not None:
            raise Refused(404, "This Lookout forwards to Sentry (SENTRY_DSN is set); it has no inbox to ingest into.", "no_inbox")
        request, intake = Request(scope), self.tunnel.intake
        raw = await intake.body(request, receive)
        if scope["method"] == "GET":  # a pixel client's event is in its query (bounded by the server's URL limit)
            request.content_encoding, raw = "", legacy_store.query_data(scope)
        key = auth.sentry_key(scope)
        if not key and kind == "envelope":
            key = auth.key_of_dsn(envelope.header_dsn(intake.header(raw, request.content_encoding)), project_id)
        if not key:
            raise Refused(401, "No sentry_key: send it as a query parameter, in X-Sentry-Auth or Authorization, "
                               "or as the envelope's dsn.",
                          "forbidden_dsn")
        dsn = await self.project_dsn(project_id, key)
        if dsn is None:
            raise Refused(403, f"Project {project_id} of this inbox has no key {key!r}.", "forbidden_dsn")
        intake.charge_key(dsn, len(raw))
        if kind == "store":
            parsed, raw, encoding = await intake.heavy(self._store_as_envelope, raw, request.content_encoding)
        else:
            parsed, encoding = await intake.envelope(raw, request.content_encoding), request.content_encoding
        await self.tunnel.commit(dsn, encoding, parsed, raw)
        return parsed.event_id

    def _store_as_envelope(self, raw: bytes, content_encoding: str) -> tuple[envelope.Envelope, bytes, str]:
        """The /store/ protocol's JSON event as an envelope of one event item (stored uncompressed)."""
        limit = self.settings.max_item_bytes
        try:
            try:
                body = legacy_store.decode(raw, content_encoding, limit)
            except encodings.DecodeError as exc:
                if exc.status != 413:
                    raise
                raise envelope.EnvelopeError(413, f"The event exceeds the {limit}-byte limit for an event.") from None
            event = _json_event(body)
            event_id = str(event.get("event_id") or uuid.uuid4().hex)
            payload = json.dumps(event).encode()
            if len(payload) > limit:
                raise envelope.EnvelopeError(413, f"The event is {len(payload)} bytes; the limit is {limit}.")
            raw = b"\n".join([
                json.dumps({"event_id": event_id}).encode(),
                json.dumps({"type": "event", "length": len(payload)}).encode(),
                payload,
            ])
            return envelope.parse(raw, limit), raw, ""
        except (encodings.DecodeError, envelope.EnvelopeError) as exc:
            raise unreadable(exc) from exc

    async def project_dsn(self, project_id: int, key: str) -> str | None:
        """The DSN that names the project in outbox rows, if `key` is the project's; else None."""
        if (project_id, key) in self._known:
            return self._known[(project_id, key)]
        dsn = str(Dsn("http", key, "localhost", None, "", str(project_id)))
        try:
            await anyio.to_thread.run_sync(self.inbox.project_for, dsn)
        except (UnknownProject, SettingsError):  # no such project, or a key that makes no DSN
            return None
        self._known[(project_id, key)] = dsn
        return dsn


def _json_event(body: bytes) -> dict[str, object]:
    """The event of a /store/ body: a JSON object, read as the inbox reads every payload
    (app/protocol/payloads.py: not too deep, no NaN, Infinity or 1e999)."""
    try:
        event = payloads.loads(body)
    except payloads.UnreadablePayload as exc:
        raise envelope.EnvelopeError(400, f"The event is not readable: {exc}") from None
    if not isinstance(event, dict):
        raise envelope.EnvelopeError(400, "The event must be a JSON object.")
    return event

