"""The tunnel route: validate an envelope, commit it to the outbox, answer.

    POST {tunnel_path}        an envelope from an SDK (the browser's, on this app's origin)
    OPTIONS {tunnel_path}     CORS for this origin and LOOKOUT_TUNNEL_ALLOWED_ORIGINS only
    GET {tunnel_path}/stats   counters and outbox depth, as JSON

Order of checks: origin (403) → size of the request (413) → decoding (400/413/415) → envelope
syntax (400/413) → DSN (403) → rate limits (429) → outbox room (503) → commit (503 if the
database fails) → 200. Nothing is
stored and nothing is sent upstream unless every check passed.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable

import anyio.to_thread
from sqlalchemy.exc import SQLAlchemyError

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.monitoring import encodings, envelope
from app.monitoring.outbox import LOCAL, PENDING, OutboxBudget, OutboxStore, OutboxWriter
from app.monitoring.ratelimits import RateLimits, category_of
from app.monitoring.settings import Dsn, Settings, SettingsError
from app.monitoring.stats import TunnelStats

logger = logging.getLogger(__name__)

RETRY_AFTER_WHEN_FULL = "60"
CORS_HEADERS = {
    "Access-Control-Allow-Methods": "POST, OPTIONS",
    "Access-Control-Allow-Headers": "Content-Type, Content-Encoding",
    "Access-Control-Expose-Headers": "Retry-After, X-Sentry-Rate-Limits",
    "Access-Control-Max-Age": "86400",
    "Vary": "Origin",
}


class Refused(Exception):
    """The request is refused: `status`, a sentence saying why, and the reason counted in stats."""

    def __init__(self, status: int, message: str, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.reason, self.headers = status, message, reason, headers or {}


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Refused(413, f"The request body is {declared} bytes; the limit is {limit} bytes.", "too_large")
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            raise Refused(413, f"The request body exceeds the limit of {limit} bytes.", "too_large")
        chunks.append(chunk)
    return b"".join(chunks)


class Tunnel:
    def __init__(
        self,
        settings: Settings,
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
        self.allowed_dsns = settings.tunnel_dsns  # computed once, checked on every request
        self.in_flight = 0  # requests being answered now; the forwarder gives way while > 0

    @property
    def routes(self) -> list[Route]:
        path = self.settings.tunnel_path
        return [
            Route(path, self.post, methods=["POST"]),
            Route(path, self.options, methods=["OPTIONS"]),
            Route(f"{path}/stats", self.stats_json, methods=["GET"]),
        ]

    def _origin_allowed(self, request: Request) -> bool:
        origin = request.headers.get("origin")
        if origin is None:
            return True  # not a browser's cross-origin request: SDKs on servers send none
        same_origin = origin.partition("://")[2] == request.headers.get("host")
        return same_origin or origin.rstrip("/") in self.settings.tunnel_origins

    def _cors(self, request: Request) -> dict[str, str]:
        origin = request.headers.get("origin")
        if origin is None or not self._origin_allowed(request):
            return {}
        return {"Access-Control-Allow-Origin": origin, **CORS_HEADERS}

    async def options(self, request: Request) -> Response:
        if not self._origin_allowed(request):
            return _refusal(Refused(403, "This origin may not post to the tunnel.", "forbidden_origin"))
        return Response(status_code=204, headers=self._cors(request))

    def busy(self) -> bool:
        return self.in_flight > 0

    async def post(self, request: Request) -> Response:
        self.in_flight += 1
        try:
            return await self.accept(request)
        except Refused as refused:
            self.stats.reject(refused.reason)
            if refused.status == 429:
                self.stats.rate_limited += 1
            return _refusal(refused, self._cors(request))
        finally:
            self.in_flight -= 1

    async def accept(self, request: Request) -> Response:
        if not self._origin_allowed(request):
            raise Refused(403, "This origin may not post to the tunnel.", "forbidden_origin")
        raw = await read_body(request, self.settings.max_request_bytes)
        encoding = request.headers.get("content-encoding", "").strip()
        try:
            decoded = encodings.decode(raw, encoding, self.settings.max_envelope_bytes)
            parsed = envelope.parse(decoded, self.settings.max_item_bytes)
        except (encodings.DecodeError, envelope.EnvelopeError) as exc:
            reason = {400: "malformed", 413: "too_large", 415: "unsupported_encoding"}.get(exc.status, "malformed")
            raise Refused(exc.status, exc.message, reason) from exc
        dsn = self._allowed_dsn(parsed.dsn)
        categories = sorted({category_of(item.type) for item in parsed.items})
        if self.status == PENDING and (wait := self.limits.retry_after(dsn, categories)) > 0:
            raise Refused(
                429, f"Sentry rate-limits {', '.join(categories)} for {wait:.0f} more seconds.",
                "rate_limited", self.limits.headers(dsn),
            )
        await self._store(dsn, encoding, categories, parsed.event_id, raw)
        self.stats.accepted += 1
        if self.status == LOCAL:
            self.stats.local += 1
        self.on_commit(dsn)
        headers = {**self._cors(request), **self.limits.headers(dsn)}
        return JSONResponse({"id": parsed.event_id}, headers=headers)

    async def _store(self, dsn: str, encoding: str, categories: list[str], event_id: str | None, raw: bytes) -> None:
        try:
            room = await self.budget.has_room(len(raw))
            if room:
                await self.writer.submit({
                    "dsn": dsn, "status": self.status, "received_at": time.time(),
                    "content_encoding": encoding if encoding.lower() not in ("", "identity") else "",
                    "categories": ",".join(categories), "event_id": event_id, "size": len(raw), "body": raw,
                })
                self.budget.took(len(raw))
        except (SQLAlchemyError, OSError) as exc:
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

    def _allowed_dsn(self, text: str | None) -> str:
        if not text:
            raise Refused(403, "The envelope header names no DSN.", "forbidden_dsn")
        try:
            dsn = _parse_dsn(text)
        except SettingsError as exc:
            raise Refused(403, f"The envelope's DSN is not valid: {exc}", "forbidden_dsn") from exc
        if dsn not in self.allowed_dsns:
            raise Refused(403, "The envelope's DSN is not one this tunnel forwards for.", "forbidden_dsn")
        return str(dsn)

    def snapshot(self) -> dict[str, object]:
        """Counters, outbox depth and active rate limits (reads the database: call off the loop)."""
        depth = self.store.depth()
        empty = {"envelopes": 0, "bytes": 0}
        return {
            "mode": "sentry" if self.settings.dsn else "local",
            "destination": self.settings.destination,
            **self.stats.as_dict(),
            "outbox": {
                "pending": depth.get(PENDING, empty),
                "local": depth.get(LOCAL, empty),
                "max_bytes": self.settings.outbox_max_bytes,
            },
            "rate_limits": self.limits.snapshot(),
        }

    async def stats_json(self, request: Request) -> Response:
        return JSONResponse(await anyio.to_thread.run_sync(self.snapshot))


@functools.lru_cache(maxsize=256)
def _parse_dsn(text: str) -> Dsn:
    """Every envelope of an SDK names the same DSN: parsing it once saved ~12 % of an acceptance."""
    return Dsn.parse(text)


def _refusal(refused: Refused, extra_headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"detail": refused.message}, status_code=refused.status, headers={
        **(extra_headers or {}), **refused.headers,
    })
