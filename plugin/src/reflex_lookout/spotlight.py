"""Spotlight's sidecar (getsentry/spotlight, `npx @spotlightjs/spotlight`): each envelope the app
reports is also posted there (`MonitoringSettings.spotlight`: "" off, else the sidecar's URL).

The sidecar's protocol (4.x, observed): `POST /stream` with the envelope's bytes and
`Content-Type: application/x-sentry-envelope` (gzip, deflate or br with Content-Encoding) is answered
200 with an empty body whatever it made of them (no content type or a malformed envelope: dropped,
said only in its own log); an encoding it cannot decode, 500. Its UI and `spotlight tail` read them
back as Server-Sent Events from `GET /stream`, one `event: application/x-sentry-envelope` an envelope.

`SpotlightRelay.send` only queues; one thread of its own posts. A thread, not an asyncio task,
because `send` is called from the event loop's thread (the tunnel's ASGI handler) and from other
threads (sentry-sdk's transport worker): a task belongs to one loop, which another thread reaches only
through `call_soon_threadsafe` and which a dev-mode reload or a forked worker replaces. The thread
holds no loop and never blocks one; it is started by the first `send` of each process (a worker
forked after the relay was made starts its own).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading

import httpx

logger = logging.getLogger(__name__)

MIB = 1024 * 1024
# An envelope over 1 MiB is dropped (Relay's limit on an event; the tunnel's on an item), and the
# queue holds at most 16 MiB besides its count: a stalled sidecar costs the app bounded memory.
MAX_ENVELOPE_BYTES = 1 * MIB
MAX_QUEUED_BYTES = 16 * MIB
HEADERS = {"Content-Type": "application/x-sentry-envelope", "User-Agent": "reflex-lookout"}


class SpotlightRelay:
    """Posts envelopes to Spotlight's sidecar at `url`, and nowhere else (no redirect is followed and no
    proxy from the environment is used). Full queue: the oldest envelopes go. Failures are logged once
    until a post succeeds again, and never raised."""

    def __init__(self, url: str, *, max_queue: int = 256, timeout_s: float = 2.0) -> None:
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ValueError(f"Spotlight's sidecar URL must be http(s)://host[:port]/path, not {url!r}")
        self.url = url
        self.max_queue = max(1, max_queue)
        self.timeout_s = timeout_s
        self.sent = self.dropped = self.failed = 0
        self._queue: collections.deque[bytes] = collections.deque()
        self._queued_bytes = 0
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._failing = False

    def send(self, body: bytes) -> None:
        """Queue one envelope's bytes, uncompressed, to be posted (returns at once, from any thread)."""
        with self._wake:
            if self._closed or not body or len(body) > MAX_ENVELOPE_BYTES:
                self.dropped += 1
                return
            self._queue.append(body)
            self._queued_bytes += len(body)
            while len(self._queue) > self.max_queue or self._queued_bytes > MAX_QUEUED_BYTES:
                self._queued_bytes -= len(self._queue.popleft())
                self.dropped += 1
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="reflex-lookout-spotlight", daemon=True)
                self._thread.start()
            self._wake.notify()

    def close(self, timeout_s: float | None = None) -> None:
        """Post what is queued, for up to `timeout_s` (default: the relay's timeout); drop the rest and stop."""
        with self._wake:
            self._closed = True
            self._wake.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(self.timeout_s if timeout_s is None else timeout_s)
        with self._wake:
            self.dropped += len(self._queue)
            self._queue.clear()
            self._queued_bytes = 0

    async def aclose(self, timeout_s: float | None = None) -> None:
        """`close`, awaited from an event loop without blocking it."""
        await asyncio.to_thread(self.close, timeout_s)

    def _run(self) -> None:
        with httpx.Client(timeout=self.timeout_s, follow_redirects=False, trust_env=False, headers=HEADERS) as client:
            while True:
                with self._wake:
                    while not self._queue and not self._closed:
                        self._wake.wait()
                    if not self._queue:
                        return
                    body = self._queue.popleft()
                    self._queued_bytes -= len(body)
                self._post(client, body)

    def _post(self, client: httpx.Client, body: bytes) -> None:
        try:
            status = client.post(self.url, content=body).status_code
            problem = "" if 200 <= status < 300 else f"it answered {status}"
        except Exception as error:  # noqa: BLE001  # never raised: whatever the sidecar or the network did, the app goes on
            problem = f"{type(error).__name__}: {error}"
        if not problem:
            self.sent += 1
            if self._failing:
                self._failing = False
                logger.info("reflex-lookout: Spotlight's sidecar at %s takes envelopes again", self.url)
            return
        self.failed += 1
        if not self._failing:
            self._failing = True
            logger.warning("reflex-lookout: an envelope for Spotlight's sidecar at %s was dropped (%s); further "
                           "failures are not logged until it takes one again", self.url, problem)
