"""sentry-sdk's transport in dev mode: each envelope of the server SDK is kept for the dev overlay
(dev_inbox.py), passed on to Spotlight's sidecar when SENTRY_SPOTLIGHT is set (`relay`), and handed to
the transport it wraps (the outbox's, when a DSN is set; none without).
As the outbox's transport does, it hands the work to a bounded queue drained by a thread: the event
loop, where a handler's error is captured, never parses an envelope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport
from sentry_sdk.worker import BackgroundWorker

from reflex_lookout.dev_inbox import DevInbox


class DevTransport(Transport):
    def __init__(self, options: dict[str, Any], inbox: DevInbox, inner: Transport | None = None,
                 relay: Callable[[bytes], None] | None = None) -> None:
        super().__init__(options)
        self.inbox, self.inner, self.relay = inbox, inner, relay
        self._worker = BackgroundWorker(queue_size=int(options["transport_queue_size"]))

    def capture_envelope(self, envelope: Envelope) -> None:
        self._worker.submit(lambda: self._keep(envelope.serialize()))
        if self.inner is not None:
            self.inner.capture_envelope(envelope)

    def _keep(self, body: bytes) -> None:
        self.inbox.add_body(body, "server")
        if self.relay is not None:
            self.relay(body)

    def flush(self, timeout: float, callback: Any | None = None) -> None:
        if timeout > 0:
            self._worker.flush(timeout, callback)
            if self.inner is not None:
                self.inner.flush(timeout, callback)

    def kill(self) -> None:
        self._worker.kill()
        if self.inner is not None:
            self.inner.kill()

    def is_healthy(self) -> bool:
        return True
