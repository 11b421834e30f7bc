"""The forwarder against a real upstream on loopback: delivery, retries, refusals, order."""

from __future__ import annotations

import asyncio
import gzip
import json
import logging

import httpx
import pytest
import sqlalchemy

from plugin_support.envelopes import SAMPLE_PATHS, build, error_event
from plugin_support.helpers import accepted, sentry_settings, until
from plugin_support.upstream import Upstream
from reflex_lookout.forwarder import Forwarder

pytestmark = pytest.mark.anyio

def outbox_count(pipeline) -> int:
    with pipeline.store.engine.connect() as connection:
        return connection.execute(sqlalchemy.text("select count(*) from outbox")).scalar_one()


async def test_5xx_is_retried_until_delivered_once(make_pipeline, upstream: Upstream) -> None:
    upstream.respond_sequence([(500, {}), (503, {})])
    pipeline = await make_pipeline(sentry_settings(upstream))
    body = error_event(str(pipeline.settings.dsn))
    assert (await pipeline.post(body)).status_code == 200
    await until(lambda: outbox_count(pipeline) == 0)
    assert [r.body for r in upstream.received] == [body] * 3
    assert len(upstream.accepted) == 1
    assert (pipeline.stats.retrying, pipeline.stats.forwarded) == (2, 1)


async def test_permanent_refusal_is_dropped_counted_and_logged(make_pipeline, upstream, caplog) -> None:
    upstream.respond(413, {"X-Sentry-Error": "envelope exceeded size limits"})
    pipeline = await make_pipeline(sentry_settings(upstream))
    with caplog.at_level(logging.WARNING):
        await pipeline.post(error_event(str(pipeline.settings.dsn)))
        await until(lambda: outbox_count(pipeline) == 0)
    assert pipeline.stats.dropped == {"413": 1}
    assert "envelope exceeded size limits" in caplog.text
    assert len(upstream.received) == 1


async def test_redirects_are_never_followed(make_pipeline, upstream: Upstream) -> None:
    upstream.respond(302, {"Location": f"{upstream.url}/elsewhere/"})
    pipeline = await make_pipeline(sentry_settings(upstream))
    await pipeline.post(error_event(str(pipeline.settings.dsn)))
    await until(lambda: outbox_count(pipeline) == 0)
    assert [r.path for r in upstream.received] == ["/api/42/envelope/"]
    assert pipeline.stats.dropped == {"302": 1}


async def test_timeouts_are_retried(make_pipeline, upstream: Upstream) -> None:
    upstream.hang(1.0)
    pipeline = await make_pipeline(sentry_settings(upstream, forward_timeout_s=0.3))
    await pipeline.post(error_event(str(pipeline.settings.dsn)))
    await until(lambda: pipeline.stats.retrying >= 1)
    upstream.hang(0)
    await until(lambda: outbox_count(pipeline) == 0)
    assert len(upstream.accepted) == 1


async def test_upstream_down_then_back_delivers_all_once_in_order(make_pipeline, upstream: Upstream) -> None:
    upstream.stop()
    # A refused connection fails at once whatever the timeout; a long one keeps a loaded machine's slow
    # answer (the upstream is a thread of this process) from being taken for a lost one and sent again.
    pipeline = await make_pipeline(sentry_settings(upstream, forward_timeout_s=30.0))
    dsn = str(pipeline.settings.dsn)
    bodies = [error_event(dsn, message=f"envelope {i}") for i in range(1000)]
    for body in bodies:
        assert (await pipeline.post(body)).status_code == 200
    await asyncio.sleep(0.5)  # the forwarder meets a refused connection meanwhile
    assert pipeline.stats.retrying >= 1
    upstream.start()
    await until(lambda: outbox_count(pipeline) == 0, timeout=60)
    assert [r.body for r in upstream.accepted] == bodies


async def test_a_new_forwarder_picks_up_what_an_old_one_left(make_pipeline, upstream: Upstream) -> None:
    first = await make_pipeline(sentry_settings(upstream), forward=False)
    bodies = [error_event(str(first.settings.dsn), message=str(i)) for i in range(20)]
    for body in bodies:
        await first.post(body)
    await make_pipeline(sentry_settings(upstream))  # same database, as after a restart
    await accepted(upstream, 20)
    assert [r.body for r in upstream.accepted] == bodies


async def test_every_sample_event_is_forwarded_byte_identical(make_pipeline, upstream: Upstream) -> None:
    samples = SAMPLE_PATHS
    assert len(samples) == 190
    pipeline = await make_pipeline(sentry_settings(upstream))
    dsn = str(pipeline.settings.dsn)
    sent = []
    for path in samples:
        raw = path.read_bytes()
        compact = json.dumps(json.loads(raw), separators=(",", ":")).encode()
        for body, encoding in [
            (build(dsn, [("event", raw)]), ""),  # with length: the file as it is, newlines and all
            (build(dsn, [("event", compact)], with_length=False), ""),
            (gzip.compress(build(dsn, [("event", raw)])), "gzip"),
            (gzip.compress(build(dsn, [("event", compact)], with_length=False)), "gzip"),
        ]:
            headers = {"Content-Encoding": encoding} if encoding else {}
            response = await pipeline.post(body, **headers)
            assert response.status_code == 200, (path.name, response.text)
            sent.append(body)
    await accepted(upstream, len(sent), timeout=60)
    assert [r.body for r in upstream.accepted] == sent


async def test_cancel_arriving_with_a_wake_up_still_stops_the_forwarder(make_pipeline, upstream: Upstream) -> None:
    # Regression: with asyncio.wait_for on Python 3.11, a cancel in the same loop step as the
    # wake-up event was swallowed, and shutdown hung for ever.
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    from reflex_lookout.forwarder import Forwarder

    forwarder = Forwarder(pipeline.store, pipeline.settings, pipeline.limits, pipeline.stats)
    for _ in range(20):
        task = asyncio.create_task(forwarder.run())
        await asyncio.sleep(0.01)  # let it reach its wait
        forwarder.wake()
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=2)
        assert done, "the forwarder ignored its cancellation"
    await forwarder.aclose()


class FailingFirst(httpx.AsyncBaseTransport):
    """httpx's own transport to the real upstream, except that its first request fails with an
    error no HTTP client is expected to raise (a test seam, not a mock)."""

    def __init__(self) -> None:
        self.real = httpx.AsyncHTTPTransport()
        self.failed = False

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not self.failed:
            self.failed = True
            raise RuntimeError("the HTTP stack broke in a way nobody expected")
        return await self.real.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()


async def test_an_unexpected_error_while_sending_is_logged_and_retried(make_pipeline, upstream: Upstream, caplog) -> None:
    pipeline = await make_pipeline(sentry_settings(upstream), forward=False)
    client = httpx.AsyncClient(transport=FailingFirst(), follow_redirects=False)
    forwarder = Forwarder(pipeline.store, pipeline.settings, pipeline.limits, pipeline.stats, client=client)
    body = error_event(str(pipeline.settings.dsn))
    assert (await pipeline.post(body)).status_code == 200
    task = asyncio.create_task(forwarder.run())
    try:
        await until(lambda: outbox_count(pipeline) == 0)  # delivered, then removed
        assert not task.done()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await forwarder.aclose()
    assert [r.body for r in upstream.accepted] == [body]
    assert (pipeline.stats.retrying, pipeline.stats.forwarded) == (1, 1)  # the failure was one attempt
    assert "nobody expected" in caplog.text
