"""What the tunnel and the ingest endpoints do with a request before they store it, in this order:

1. the client's rate (reflex_lookout/intake_limits.py), before its body is read: 429;
2. the body, within the request cap and the body timeout (`body`, reading as reflex_lookout/protocol/asgi.py
   does; its deadline kept by `_Deadlines`): 413, 408;
3. the envelope's header line alone, decoded from the start of the body (`header`), so that the DSN
   or key it names is checked before anything else is decoded: 415, 400;
4. the DSN's rate, once the caller has found the DSN allowed (`charge_key`): 429;
5. the whole envelope (`envelope`): decoded within the envelope cap, parsed (at most MAX_ITEMS items,
   each capped), and each container's records checked (reflex_lookout/protocol/containers.py): 400, 413, 415.

Step 5 is the heavy one (a 20 MiB body may inflate to 100 MiB): unless the body is small and not
compressed, it runs on a worker thread, at most HEAVY_AT_ONCE at a time, so the event loop keeps
answering other requests and the memory spent is bounded by that many envelopes.

A small plain body, what a browser sends, may be read whole at once instead (`small_envelope`): its
header line is then parsed once, not twice; when that fails the steps are taken in order, so every
refusal is the one they give.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from reflex_lookout.intake_limits import Buckets, IntakeLimits
from reflex_lookout.protocol import containers, encodings, envelope
from reflex_lookout.protocol.asgi import Receive, Refused, Request, _read_body
from reflex_lookout.protocol.clients import client_address, forwarded_chain
from reflex_lookout.protocol.envelope import Envelope
from reflex_lookout.settings import MonitoringSettings

T = TypeVar("T")

# An uncompressed body this small is parsed on the event loop: at most ~1,000 items, about a
# millisecond, less than the hand-over to a thread costs (the tunnel's benchmark envelope is 7 KB).
INLINE_BYTES = 64 * 1024
# Heavy bodies decoded and parsed at once (each may hold ~100 MiB decoded plus its items).
HEAVY_AT_ONCE = 2

_REFUSAL_REASONS = {400: "malformed", 413: "too_large", 415: "unsupported_encoding"}
# How often the bodies being read are checked against their deadline: a body still missing is
# answered 408 between `body_timeout_s` and this much later.
DEADLINE_TICK_S = 0.25


def unreadable(exc: encodings.DecodeError | envelope.EnvelopeError) -> Refused:
    """The refusal of a body that does not decode or parse, counted under its reason."""
    return Refused(exc.status, exc.message, _REFUSAL_REASONS.get(exc.status, "malformed"))


class Intake:
    def __init__(self, settings: MonitoringSettings) -> None:
        self.settings = settings
        self.limits = IntakeLimits.from_settings(settings)
        self._heavy: tuple[asyncio.AbstractEventLoop, anyio.CapacityLimiter] | None = None
        self._deadlines: _Deadlines | None = None

    def client(self, request: Request) -> str:
        """The client's address: the peer, or who a proxy on this machine says it was (reflex_lookout/protocol/clients.py)."""
        return client_address(request.peer, forwarded_chain(request.forwarded_for), self.settings.trusted_proxy_hops)

    async def body(self, request: Request, receive: Receive, limit: int | None = None) -> bytes:
        """The body (at most `limit` bytes, else the request cap: 413), if the client's rate allows
        one more (charged with its size once read); 408 when it has not all arrived within the body
        timeout (a client trickling a body in holds only its own request, never the others)."""
        buckets = self.limits.client
        client = self.client(request) if buckets.per_minute > 0 else ""  # no limit: no address to find
        _check(buckets, client, "from this client")
        limit = limit or self.settings.max_request_bytes
        declared = request.content_length
        if declared.isdigit() and int(declared) > limit:
            raise Refused(413, f"The request body is {declared} bytes; the limit is {limit} bytes.", "too_large")
        raw = await self._deadlines_here().bounded(_read_body(receive, limit), self.settings.body_timeout_s)
        buckets.spend(client, len(raw))
        return raw

    def header(self, raw: bytes, content_encoding: str) -> dict[str, object]:
        """The envelope header, from as little of the body as holds its line (decoded on the loop:
        at most MAX_HEADER_BYTES plus one decoding step)."""
        try:
            start = encodings.decode_start(raw, content_encoding, envelope.MAX_HEADER_BYTES, envelope.header_line_ended)
            return envelope.read_header(start)
        except (encodings.DecodeError, envelope.EnvelopeError) as exc:
            raise unreadable(exc) from exc

    def charge_key(self, dsn: str, size: int) -> None:
        """Count `size` bytes against the DSN's rate: 429 if it was already spent."""
        _check(self.limits.key, dsn, "for this DSN")
        self.limits.key.spend(dsn, size)

    def small_envelope(self, raw: bytes, content_encoding: str) -> Envelope | None:
        """The whole envelope when the body is small and plain and it reads (decoded, parsed and
        checked as `envelope` does), read on the event loop; None otherwise: the caller then takes
        steps 3-5 in order, and they give the refusal. Under MAX_HEADER_BYTES, `header` reads the
        same header line as the whole parse does, so steps 3 and 4 then answer as they would have."""
        if len(raw) >= envelope.MAX_HEADER_BYTES or not _light(raw, content_encoding):
            return None
        try:
            if not encodings.is_identity(content_encoding):
                return None
            return self._envelope(raw, content_encoding)
        except (Refused, encodings.DecodeError):
            return None

    async def envelope(self, raw: bytes, content_encoding: str) -> Envelope:
        """The whole envelope, decoded, parsed and checked (see the module's step 5)."""
        return await self.heavy(self._envelope, raw, content_encoding)

    async def heavy(self, work: Callable[[bytes, str], T], raw: bytes, content_encoding: str) -> T:
        """`work(raw, content_encoding)`: here if the body is small and plain, else on a worker thread."""
        if _light(raw, content_encoding):
            return work(raw, content_encoding)
        return await anyio.to_thread.run_sync(work, raw, content_encoding, limiter=self._limiter())

    def _envelope(self, raw: bytes, content_encoding: str) -> Envelope:
        try:
            parsed = envelope.parse(encodings.decode(raw, content_encoding, self.settings.max_envelope_bytes),
                                    self.settings.max_item_bytes)
            containers.check(parsed, self.settings.max_item_bytes)
        except (encodings.DecodeError, envelope.EnvelopeError) as exc:
            raise unreadable(exc) from exc
        return parsed

    def _deadlines_here(self) -> _Deadlines:
        """The body reads' deadlines on the running event loop (tests run several loops in turn)."""
        loop = asyncio.get_running_loop()
        if self._deadlines is None or self._deadlines.loop is not loop:
            self._deadlines = _Deadlines(loop)
        return self._deadlines

    def _limiter(self) -> anyio.CapacityLimiter:
        """The heavy work's slots, on the running event loop (tests run several loops in turn)."""
        loop = asyncio.get_running_loop()
        if self._heavy is None or self._heavy[0] is not loop:
            self._heavy = (loop, anyio.CapacityLimiter(HEAVY_AT_ONCE))
        return self._heavy[1]


class _Deadlines:
    """The deadlines of the bodies being read on one event loop, checked every DEADLINE_TICK_S by one
    timer, which runs only while a body is being read; a read past its deadline is cancelled and
    answered 408. As `asyncio.timeout` would, but without a timer of its own per request: that cost
    ~5 µs of the event loop's time per envelope, a twentieth of the tunnel's own (bench/README.md)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._reading: dict[asyncio.Task[object], float] = {}  # the task reading a body → its deadline
        self._expired: set[asyncio.Task[object]] = set()  # cancelled here, the cancellation not yet seen
        self._timer: asyncio.TimerHandle | None = None

    async def bounded(self, reading: Awaitable[bytes], timeout_s: float) -> bytes:
        task = asyncio.current_task()
        if task is None:  # not in a task (never so under an ASGI server): nothing to cancel
            return await reading
        cancelling = task.cancelling()
        self._reading[task] = self.loop.time() + timeout_s
        if self._timer is None:
            self._timer = self.loop.call_later(DEADLINE_TICK_S, self._check)
        try:
            return await reading
        except asyncio.CancelledError:
            if task in self._expired:
                self._expired.discard(task)
                if task.uncancel() <= cancelling:  # cancelled by the deadline alone, not also from outside
                    raise Refused(408, f"The request body did not arrive within {timeout_s:g} s.",
                                  "body_timeout") from None
            raise
        finally:
            self._reading.pop(task, None)
            if task in self._expired:  # the read ended otherwise (its cancellation swallowed): undone
                self._expired.discard(task)
                task.uncancel()

    def _check(self) -> None:
        now = self.loop.time()
        for task, deadline in list(self._reading.items()):
            if deadline <= now:
                del self._reading[task]
                self._expired.add(task)
                task.cancel()
        self._timer = self.loop.call_later(DEADLINE_TICK_S, self._check) if self._reading else None


def _light(raw: bytes, content_encoding: str) -> bool:
    """A small JSON body with nothing to decode (or a coding no one knows: `work` refuses it at once).
    One that does not start as JSON may be a legacy /store/ body, base64 of zlib data that inflates
    to the item cap (as Lookout's inbox decodes it): that is decoded on a thread."""
    try:
        return len(raw) <= INLINE_BYTES and encodings.is_identity(content_encoding) and raw.lstrip()[:1] in (b"{", b"[")
    except encodings.DecodeError:
        return True


def _check(buckets: Buckets, key: str, whose: str) -> None:
    if wait := buckets.wait(key):
        raise Refused(
            429, f"Lookout takes at most {buckets.per_minute} bytes a minute {whose}; try again in {wait} s.",
            "too_many_requests", {"Retry-After": str(wait)},
        )
