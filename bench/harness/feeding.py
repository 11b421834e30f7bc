"""The inbox feeder's rate, in-process: what the benchmarks that feed envelopes into a fresh database
share (inbox_ingest.py, symbolicate.py, triage_feeder.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from app.ingest.feeder import BATCH, InboxFeeder
from app.ingest.store import InboxStore
from reflex_lookout.outbox import LOCAL, OutboxStore, new_row
from reflex_lookout.scrubbing.settings import ScrubbingSettings


def unscrubbed(project_id: int) -> ScrubbingSettings:
    """`scrubbing_of` for the benchmarks of another part of ingest: scrubbing off, so that its cost
    (bench/inbox_ingest.py measures it) stays out of theirs, and their figures compare with earlier ones."""
    return ScrubbingSettings(scrub_data=False)


def fed_per_second(inbox: InboxStore, bodies: Sequence[bytes], dsn: str) -> float:
    """Events/s of the feeder reading `bodies`, accepted for `dsn`, into `inbox`: written to its
    database's outbox first (untimed, in batches as the tunnel's writer commits them), then read by
    `InboxFeeder.feed_once` until none is left (timed). Every envelope must be read, none rejected."""
    outbox = OutboxStore(inbox.engine)
    for at in range(0, len(bodies), BATCH):
        outbox.add_many([new_row(dsn, LOCAL, body, ["error"], None) for body in bodies[at:at + BATCH]])
    feeder = InboxFeeder(outbox, inbox)
    start = time.perf_counter()
    while feeder.feed_once():
        pass
    seconds = time.perf_counter() - start
    assert feeder.ingested == len(bodies) and feeder.rejected == 0, (feeder.ingested, feeder.rejected)
    return len(bodies) / seconds
