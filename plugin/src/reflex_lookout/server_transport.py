"""sentry-sdk's transport for this backend: envelopes go into the outbox, like the browser's.

The browser's envelopes are committed to the outbox by the tunnel before it answers; the server
SDK's are committed by this transport's worker thread, so neither path depends on Sentry being
reachable: in Sentry mode the forwarder delivers them, in local mode they are the embedded inbox
(no network round trip). As with sentry-sdk's own HTTP transport, the SDK hands envelopes to a
bounded queue (`transport_queue_size`, the spec's transport buffer of 64) and a thread drains it;
an envelope that finds the queue full, or the outbox over its cap, is dropped and counted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import sentry_sdk
from sentry_sdk.envelope import Envelope
from sentry_sdk.transport import Transport
from sentry_sdk.worker import BackgroundWorker

from reflex_lookout.outbox import LOCAL, PENDING, OutboxBudget, OutboxStore, StoreFailed, new_row
from reflex_lookout.protocol.ratelimits import category_of

logger = logging.getLogger(__name__)


class OutboxTransport(Transport):
    def __init__(
        self,
        options: dict[str, Any],
        store: OutboxStore,
        local: bool,
        max_bytes: int,
        on_commit: Callable[[str], None] = lambda dsn: None,
        prepare: Callable[[str, bytes], bytes] | None = None,
    ) -> None:
        """`prepare(dsn, body)`: the bytes that may be written of an envelope (filtered and scrubbed;
        runtime.py `server_body`), or an exception: the envelope is dropped and counted."""
        super().__init__(options)
        self.prepare = prepare
        self.dsn = str(options["dsn"])
        self.status = LOCAL if local else PENDING
        self.store = store
        self.budget = OutboxBudget(store, max_bytes)
        self.on_commit = on_commit
        self.queue_size = int(options["transport_queue_size"])
        self._worker = BackgroundWorker(queue_size=self.queue_size)
        self.stored = 0
        self.dropped: dict[str, int] = {}

    def capture_envelope(self, envelope: Envelope) -> None:
        if not self._worker.submit(lambda: self._store(envelope)):
            self._lost("queue_overflow")

    def _store(self, envelope: Envelope) -> None:
        # The outbox's own SQL must not become breadcrumbs of whatever scope started this thread.
        with sentry_sdk.isolation_scope():
            body = envelope.serialize()
            if self.prepare is not None:
                try:
                    body = self.prepare(self.dsn, body)
                except Exception as exc:  # noqa: BLE001 (an envelope that cannot be scrubbed is not written)
                    logger.warning("a server envelope could not be scrubbed and was dropped (%s)", type(exc).__name__)
                    return self._lost("unscrubbable")
            if not self.budget.has_room_blocking(len(body)):
                logger.warning("the outbox is full: a server envelope (%d bytes) was dropped", len(body))
                return self._lost("outbox_full")
            categories = sorted({category_of(item.type or "") for item in envelope.items})
            try:
                self.store.add_many([new_row(self.dsn, self.status, body, categories, envelope.headers.get("event_id"))])
            except StoreFailed as exc:
                logger.error("the outbox could not store a server envelope: %s", exc)
                return self._lost("store_failed")
            self.budget.took(len(body))
            self.stored += 1
            self.on_commit(self.dsn)

    def _lost(self, reason: str) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1

    def flush(self, timeout: float, callback: Any | None = None) -> None:
        if timeout > 0:
            self._worker.flush(timeout, callback)

    def kill(self) -> None:
        self._worker.kill()

    def is_healthy(self) -> bool:
        return True
