"""Where the tunnel runs `prepare` (what of an envelope may be written: filtered and scrubbed) for an
envelope it commits: on the event loop while the DSN's prepares have been cheap, else on a worker
thread (`PrepareRunner`)."""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio.to_thread

from reflex_lookout.protocol import envelope
from reflex_lookout.protocol.asgi import Refused
from reflex_lookout.tunnel_dsns import MAX_KNOWN_DSNS

# Where `prepare` runs. Handing an envelope to a worker thread and back costs more than a prepare
# that finds nothing to scrub (~0.13 ms of CPU for a browser's error event): the GIL changes hands
# twice, among as many threads as requests wait, each hand-over a wake-up; in local mode the tunnel
# accepted 1.4-1.8x as many envelopes with it on the loop (bench/README.md, issue 37). But one that
# calls Relay (a millisecond or more, mostly without the GIL) must not hold the loop. So: on the
# loop while prepares of the DSN have been cheap (an average of their CPU time, wherever they ran,
# under PREPARE_ON_LOOP_S) and the items are small; else on a thread.
# Only with a SQLite outbox: a prepare may read settings now and then (Lookout's: a project's, kept
# 5 s), a local read like the commits the writer makes on the loop; another database's answer would
# be awaited over the network, so there it always runs on a thread.
PREPARE_ON_LOOP_S = 0.0004
PREPARE_ON_LOOP_BYTES = 64 * 1024
PREPARE_COST_WEIGHT = 0.2  # of the newest prepare in the average


class PrepareRunner:
    """Runs `prepared` (the tunnel's: the bytes `prepare` lets be written of an envelope) on the event
    loop or a worker thread, each one's CPU time noted per DSN."""

    def __init__(self, prepared: Callable[[str, envelope.Envelope], bytes], on_loop: bool) -> None:
        self.prepared = prepared
        # Per DSN, the average CPU seconds of its prepares (`run`); a new DSN starts on a thread.
        self._prepare_cost: dict[str, float] = {}
        self._prepare_on_loop = on_loop  # a SQLite outbox (PREPARE_ON_LOOP_S)

    async def run(self, dsn: str, parsed: envelope.Envelope) -> bytes:
        """`prepared`, on the event loop or a worker thread (PREPARE_ON_LOOP_S), its cost noted."""
        cost = self._prepare_cost.get(dsn, PREPARE_ON_LOOP_S)
        if (cost < PREPARE_ON_LOOP_S and self._prepare_on_loop
                and sum(len(item.payload) for item in parsed.items) <= PREPARE_ON_LOOP_BYTES):
            body, took = self._timed_prepare(dsn, parsed)
        else:
            body, took = await anyio.to_thread.run_sync(self._timed_prepare, dsn, parsed)
        if dsn not in self._prepare_cost and len(self._prepare_cost) >= MAX_KNOWN_DSNS:
            self._prepare_cost.clear()
        self._prepare_cost[dsn] = cost + PREPARE_COST_WEIGHT * (took - cost)
        return body

    def _timed_prepare(self, dsn: str, parsed: envelope.Envelope) -> tuple[bytes, float]:
        """`prepared` and the CPU seconds it took (this thread's: not the time it waited for the GIL).
        A refusal is noted as costly: the next prepares of the DSN go to a thread until cheap again."""
        started = time.thread_time()
        try:
            return self.prepared(dsn, parsed), time.thread_time() - started
        except Refused:
            self._prepare_cost[dsn] = max(self._prepare_cost.get(dsn, 0.0), PREPARE_ON_LOOP_S)
            raise
