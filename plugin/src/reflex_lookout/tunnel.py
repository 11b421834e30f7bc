"""The tunnel: validate an envelope, commit it to the outbox, answer. A plain ASGI app.

    POST {tunnel_path}        an envelope from an SDK (the browser's, on this app's origin)
    OPTIONS {tunnel_path}     CORS for this origin and LOOKOUT_TUNNEL_ALLOWED_ORIGINS only
    GET {tunnel_path}/stats   counters and outbox depth, as JSON: only with LOOKOUT_TUNNEL_STATS on
                              (a host app's default is off: the path is the app's own, 404), and then
                              only to this machine or a bearer of LOOKOUT_TUNNEL_STATS_TOKEN, never to a
                              page of another site (`stats_refusal`, tunnel_access.py); the outbox's
                              depth (an aggregate query) is read at most once a second per process
                              (`outbox_depth`)

Order of checks: origin (403) → the client's rate (429) → size of the request (413, 408) → the
header line's decoding and syntax (415, 400) → DSN (403) → the DSN's rate (429) → the whole
envelope's decoding, syntax, item count and sizes (400, 413, 415; off the event loop when large,
reflex_lookout/intake.py; a small plain body, a browser's, is read whole at once, with the same
refusals in the same order) → Sentry's rate limits (429) → in local mode, the project's quotas (429,
Lookout's inbox's, given as `admit`) → outbox room (503) → commit (503 if the
database fails) → 200. Nothing is stored and nothing is sent upstream unless every check passed.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Sequence

import anyio.to_thread
from sqlalchemy.exc import SQLAlchemyError

from reflex_lookout.intake import Intake
from reflex_lookout.outbox import LOCAL, PENDING, OutboxBudget, OutboxStore, StoreFailed, new_row
from reflex_lookout.outbox_writer import OutboxWriter
from reflex_lookout.protocol import envelope
from reflex_lookout.protocol.asgi import (
    ASGIApp,
    ClientGone,
    Receive,
    Refused,
    Request,
    Scope,
    Send,
    encoded,
    refuse,
    respond,
    serve_lifespan,
)
from reflex_lookout.protocol.ratelimits import RateLimits, category_of
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel_access import cors_headers, forbidden_origin, origin_allowed, stats_refusal
from reflex_lookout.tunnel_dsns import AllowedDsns
from reflex_lookout.tunnel_prepare import PrepareRunner

logger = logging.getLogger(__name__)

RETRY_AFTER_WHEN_FULL = "60"
# Counts an envelope's items (their types) against its DSN's quotas, or raises `Refused` (429).
Admit = Callable[[str, Sequence[str]], Awaitable[None]]
# What of an envelope accepted for a DSN may be written (filtered and scrubbed: reflex_lookout/scrubbing/);
# run on the event loop while cheap, else on a worker thread (`PrepareRunner`, tunnel_prepare.py), so it
# must be thread-safe and may block only briefly; a ValueError (an item that cannot be scrubbed) refuses the
# envelope.
Prepare = Callable[[str, envelope.Envelope], envelope.Envelope]


# The outbox's depth is an aggregate over the whole table: read at most once a second per process,
# however often the stats are asked for (the console's home page reads them too).
STATS_MAX_AGE_S = 1.0


class Tunnel:
    """The tunnel's three routes as a plain ASGI app (Starlette's request and routing layers cost
    about as much per envelope as the whole validation; see bench/README.md)."""

    def __init__(
        self,
        settings: MonitoringSettings,
        store: OutboxStore,
        limits: RateLimits,
        stats: TunnelStats,
        on_commit: Callable[[str], None] = lambda dsn: None,
    ) -> None:
        self.settings = settings
        self.store = store
        self.writer = OutboxWriter(store)
        self.budget = OutboxBudget(store, settings.outbox_max_bytes)
        self.limits = limits
        self.stats = stats
        self.on_commit = on_commit
        self.status = PENDING if settings.dsn else LOCAL
        self.stats_path = f"{settings.tunnel_path}/stats"
        self.intake = Intake(settings)  # the steps before storing, shared with the ingest endpoints
        self.in_flight = 0  # requests being answered now; the forwarder gives way while > 0
        self.admit: Admit | None = None  # Lookout's inbox's quotas, in local mode (set by the host app)
        # Filtering and scrubbing before the first write: Lookout's inbox in local mode (set by the host app),
        # Relay's defaults in Sentry mode when LOOKOUT_SCRUB_BEFORE_FORWARD is set (runtime.py).
        self.prepare: Prepare | None = None
        self._dsns = AllowedDsns()  # which DSNs pass, each one's answer kept
        # `prepared`, on the event loop while cheap (with a SQLite outbox only), else on a worker thread.
        self._prepare_runner = PrepareRunner(self.prepared, store.engine.dialect.name == "sqlite")
        self.clock: Callable[[], float] = time.monotonic  # when the outbox's depth was read (`outbox_depth`)
        self._depth: tuple[float, dict[str, dict[str, int]]] | None = None
        self._depth_lock = threading.Lock()

    def asgi(self, app: ASGIApp | None = None) -> ASGIApp:
        """An ASGI app serving the tunnel's paths and handing every other request to `app` (404 without
        one). Reflex takes it as `api_transformer`: it wraps Reflex's own backend app."""
        path = self.settings.tunnel_path
        stats_path = self.stats_path if self.settings.tunnel_stats else path  # off: the app's own path (its 404)

        async def serve(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http" and (scope["path"] == path or scope["path"] == stats_path):
                await self.handle(scope, receive, send)
            elif app is not None:
                await app(scope, receive, send)
            elif scope["type"] == "http":
                await respond(send, 404, b'{"detail":"Not Found"}')
            elif scope["type"] == "lifespan":  # nothing to start: a test client's lifespan
                await serve_lifespan(receive, send)

        return serve

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, request = scope["method"], Request(scope)
        if scope["path"] == self.stats_path:
            if method != "GET":
                return await _method_not_allowed(send, b"GET")
            if (refused := stats_refusal(scope, request, self.settings.tunnel_stats_token)) is not None:
                return await refuse(send, refused)
            # No CORS headers, ever: the stats are for this machine's programs and the token's bearer.
            body = json.dumps(await anyio.to_thread.run_sync(self.snapshot)).encode()
            return await respond(send, 200, body, [(b"cache-control", b"no-store")])
        if method == "POST":
            return await self.post(request, receive, send)
        if method == "OPTIONS":
            if not origin_allowed(request, self.settings.tunnel_origins):
                return await refuse(send, forbidden_origin())
            await send({"type": "http.response.start", "status": 204,
                        "headers": cors_headers(request, self.settings.tunnel_origins)})
            return await send({"type": "http.response.body", "body": b""})
        return await _method_not_allowed(send, b"POST, OPTIONS")

    def busy(self) -> bool:
        return self.in_flight > 0

    async def post(self, request: Request, receive: Receive, send: Send) -> None:
        self.in_flight += 1
        try:
            event_id, dsn = await self.accept(request, receive)
        except Refused as refused:
            self.stats.reject(refused.reason)
            if refused.reason == "rate_limited":  # Sentry's limits (intake's own are "too_many_requests")
                self.stats.rate_limited += 1
            return await refuse(send, refused, cors_headers(request, self.settings.tunnel_origins))
        except ClientGone:
            return None
        finally:
            self.in_flight -= 1
        limited = self.limits.headers(dsn)
        cors = cors_headers(request, self.settings.tunnel_origins)
        headers = cors + encoded(limited) if limited else cors
        await respond(send, 200, _id_json(event_id), headers)

    async def accept(self, request: Request, receive: Receive) -> tuple[str | None, str]:
        """Validate and store one envelope: (its event id, its DSN), or `Refused` saying why not."""
        if not origin_allowed(request, self.settings.tunnel_origins):
            raise forbidden_origin()
        raw = await self.intake.body(request, receive)
        encoding = request.content_encoding
        parsed = self.intake.small_envelope(raw, encoding)  # the usual browser envelope: read once
        if parsed is not None:
            dsn = self._dsns.check(parsed.dsn, self.settings)
            self.intake.charge_key(dsn, len(raw))
        else:  # the header line alone first: its DSN is checked before the rest is decoded
            dsn = self._dsns.check(envelope.header_dsn(self.intake.header(raw, encoding)), self.settings)
            self.intake.charge_key(dsn, len(raw))
            parsed = await self.intake.envelope(raw, encoding)
        categories = sorted({category_of(item.type) for item in parsed.items})
        if self.status == PENDING and (wait := self.limits.retry_after(dsn, categories)) > 0:
            raise Refused(
                429, f"Sentry rate-limits {', '.join(categories)} for {wait:.0f} more seconds.",
                "rate_limited", self.limits.headers(dsn),
            )
        await self.commit(dsn, encoding, parsed, raw, categories)
        return parsed.event_id, dsn

    async def commit(self, dsn: str, encoding: str, parsed: envelope.Envelope, raw: bytes,
                     categories: Sequence[str] | None = None, item_types: Sequence[str] | None = None) -> None:
        """Store one validated envelope (`raw`, as `parsed`) in the outbox, count it and tell
        `on_commit` (`Refused` 429 past a quota, 400 when it cannot be scrubbed, 503 when there is no
        room or the database fails); the inbox's ingest endpoints commit here too. With `prepare`
        set, what is stored is its answer (made on the event loop while cheap, else on a worker
        thread: `PrepareRunner`): `raw` is never written.
        `categories` and `item_types`: the envelope's own unless given."""
        categories = sorted({category_of(item.type) for item in parsed.items}) if categories is None else categories
        try:
            if self.admit is not None and self.status == LOCAL:
                await self.admit(dsn, [item.type for item in parsed.items] if item_types is None else item_types)
            if self.prepare is not None:
                raw, encoding = await self._prepare_runner.run(dsn, parsed), ""
            room = await self.budget.has_room(len(raw))
            if room:
                await self.writer.submit(new_row(dsn, self.status, raw, categories, parsed.event_id, encoding))
                self.budget.took(len(raw))
        except (StoreFailed, SQLAlchemyError, OSError) as exc:
            # Not the sender's fault and nothing was stored: the SDK should keep it and try again.
            logger.error("the outbox could not store an envelope: %s", exc)
            raise Refused(
                503, "The envelope could not be stored; try again later.", "store_failed",
                {"Retry-After": RETRY_AFTER_WHEN_FULL},
            ) from exc
        if not room:
            raise Refused(
                503, "The outbox is full; try again later.", "outbox_full", {"Retry-After": RETRY_AFTER_WHEN_FULL}
            )
        self.stats.accepted += 1
        if self.status == LOCAL:
            self.stats.local += 1
        self.on_commit(dsn)

    def prepared(self, dsn: str, parsed: envelope.Envelope) -> bytes:
        """The bytes `prepare` lets be written of `parsed` (blocking: a worker thread's, or the server
        SDK transport's); `Refused` 400 with a sentence when an item cannot be scrubbed."""
        if self.prepare is None:
            return envelope.serialize(parsed)
        try:
            return envelope.serialize(self.prepare(dsn, parsed))
        except ValueError as exc:
            raise Refused(400, str(exc) or "The envelope could not be scrubbed.", "malformed") from None

    def outbox_depth(self) -> dict[str, dict[str, int]]:
        """`OutboxStore.depth`, read again only once the last reading is STATS_MAX_AGE_S old (blocking:
        callers at the same time share one reading)."""
        with self._depth_lock:
            if self._depth is None or self.clock() - self._depth[0] >= STATS_MAX_AGE_S:
                depth = self.store.depth()
                self._depth = (self.clock(), depth)  # from its end: a slow reading is not run back to back
            return self._depth[1]

    def snapshot(self) -> dict[str, object]:
        """Counters and active rate limits as they are now, and the outbox's depth as it was at most
        STATS_MAX_AGE_S ago (may read the database: call off the loop)."""
        depth = self.outbox_depth()
        empty = {"envelopes": 0, "bytes": 0}
        return {
            "mode": "sentry" if self.settings.dsn else "local",
            "destination": self.settings.destination,
            **self.stats.as_dict(),
            "outbox": {
                "pending": depth.get(PENDING, empty),
                # Kept for the embedded inbox: waiting for it, or read into it already (the stored
                # copy of their events and raw items).
                "local": depth.get(LOCAL, empty),
                "max_bytes": self.settings.outbox_max_bytes,
            },
            "rate_limits": self.limits.snapshot(),
        }


async def _method_not_allowed(send: Send, allow: bytes) -> None:
    await respond(send, 405, b'{"detail":"Method Not Allowed"}', [(b"allow", allow)])


def _id_json(event_id: str | None) -> bytes:
    """`{"id": ...}` as Sentry answers; ids are 32 hex digits, so the common case needs no encoder."""
    if event_id is not None and len(event_id) <= 36 and event_id.replace("-", "").isalnum() and event_id.isascii():
        return b'{"id":"%s"}' % event_id.encode()
    return json.dumps({"id": event_id}).encode()
