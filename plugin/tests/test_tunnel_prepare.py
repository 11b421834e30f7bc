"""Where the tunnel's `prepare` runs (issue 37): with a SQLite outbox, on the event loop while it
has been cheap for the DSN (a worker thread and back cost more than a prepare that finds nothing to
scrub), on a worker thread once it is not (Relay, milliseconds, must not hold the loop); with another
database always on a thread (a prepare may read settings from it). What is written is its answer
either way, committed before the 200."""

from __future__ import annotations

import threading
import time

import pytest
import sqlalchemy

from plugin_support.envelopes import error_event
from plugin_support.helpers import sentry_settings
from plugin_support.upstream import Upstream
from reflex_lookout.protocol import envelope
from reflex_lookout.tunnel_prepare import PREPARE_ON_LOOP_S

pytestmark = pytest.mark.anyio


def bodies(pipeline) -> list[bytes]:
    with pipeline.store.engine.connect() as connection:
        return [row[0] for row in connection.execute(sqlalchemy.text("select body from outbox order by id"))]


def on_sqlite(pipeline) -> bool:
    return pipeline.store.engine.dialect.name == "sqlite"


class Recording:
    """A prepare that marks what it writes, notes the thread it ran on, and burns `cpu_s` first."""

    def __init__(self, cpu_s: float = 0.0) -> None:
        self.cpu_s, self.threads = cpu_s, []

    def __call__(self, dsn: str, parsed: envelope.Envelope) -> envelope.Envelope:
        self.threads.append(threading.get_ident())
        started = time.thread_time()
        while time.thread_time() - started < self.cpu_s:
            pass
        return envelope.Envelope({**parsed.headers, "prepared": len(self.threads)}, parsed.items)


async def test_a_cheap_prepare_runs_on_the_event_loop_after_the_first(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    pipeline.tunnel.prepare = prepare = Recording()
    loop_thread = threading.get_ident()
    for _ in range(5):
        assert (await pipeline.post(error_event(str(pipeline.settings.dsn)))).status_code == 200
    assert prepare.threads[0] != loop_thread  # a DSN not seen yet: on a thread, its cost measured there
    if on_sqlite(pipeline):
        assert prepare.threads[1:] == [loop_thread] * 4
    else:
        assert loop_thread not in prepare.threads
    assert [envelope.parse(body, 1 << 20).headers["prepared"] for body in bodies(pipeline)] == [1, 2, 3, 4, 5]


async def test_a_costly_prepare_runs_on_a_worker_thread(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    pipeline.tunnel.prepare = prepare = Recording(cpu_s=2 * PREPARE_ON_LOOP_S)
    loop_thread = threading.get_ident()
    for _ in range(5):
        assert (await pipeline.post(error_event(str(pipeline.settings.dsn)))).status_code == 200
    assert loop_thread not in prepare.threads
    assert len(bodies(pipeline)) == 5


async def test_a_prepare_that_turns_costly_leaves_the_loop(make_pipeline, upstream: Upstream) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    pipeline.tunnel.prepare = prepare = Recording()
    loop_thread = threading.get_ident()
    body = error_event(str(pipeline.settings.dsn))
    for _ in range(3):
        assert (await pipeline.post(body)).status_code == 200
    if not on_sqlite(pipeline):
        assert loop_thread not in prepare.threads
        return
    assert prepare.threads[-1] == loop_thread
    prepare.cpu_s = 20 * PREPARE_ON_LOOP_S  # e.g. every item now goes to Relay
    for _ in range(3):
        assert (await pipeline.post(body)).status_code == 200
    # The first costly one ran where the cheap ones did; it was measured, and the next left the loop.
    assert prepare.threads[-3] == loop_thread and loop_thread not in prepare.threads[-2:]
