"""Delivers the outbox to Sentry: one lane per DSN, in receipt order, retrying until upstream decides.

Outcomes of one attempt, by upstream's answer:
- 2xx: delivered, the row is removed;
- 429: rate-limited, the row waits for the limit to expire (and the tunnel starts answering 429);
- 5xx, timeout, network error: retried with exponential backoff and jitter, the lane waits;
- 3xx, other 4xx: refused for good (redirects are never followed), the row is removed, counted and
  logged with upstream's reason.
Rows are removed in small batches after delivery: a crash may re-send a few (at-least-once).
Anything unexpected is logged and waited out, never fatal: an error while sending one row is a
failed attempt of that row (retried with backoff, as a 5xx), one in a lane or in the main loop
ends that turn, which starts again after a backoff (so a persistent fault never spins).

Intake comes first: the outbox is durable, so while the tunnel is busy answering (`intake_busy`)
a lane waits before each delivery, up to `MAX_YIELD_S`, and catches up in the gaps. Forwarding
and intake share one process and one core; without this, each delivery (about 3× the CPU of an
acceptance) would slow the answers browsers wait for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

import anyio.to_thread
import httpx
from sqlalchemy.exc import SQLAlchemyError

from reflex_lookout.background import Lease
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import Delivery, OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.protocol.retry import backoff
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.stats import TunnelStats

logger = logging.getLogger(__name__)

LANE_BATCH = 64
POLL_SECONDS = 1.0
MAX_YIELD_S = 0.05  # at least ~20 deliveries/s per lane, however busy the intake
YIELD_STEP_S = 0.002


def _reason(response: httpx.Response) -> str:
    if error := response.headers.get("x-sentry-error"):
        return error
    if response.is_redirect:
        return f"redirect to {response.headers.get('location', '?')}, not followed"
    return response.text[:200].strip() or response.reason_phrase


class Forwarder:
    def __init__(
        self,
        store: OutboxStore,
        settings: MonitoringSettings,
        limits: RateLimits,
        stats: TunnelStats,
        client: httpx.AsyncClient | None = None,
        clock: Callable[[], float] = time.time,
        intake_busy: Callable[[], bool] = lambda: False,
        lease: Lease | None = None,
    ) -> None:
        """`lease`: with several workers, only its holder forwards (reflex_lookout/background.py)."""
        self.store = store
        self.settings = settings
        self.limits = limits
        self.stats = stats
        self.clock = clock
        self.intake_busy = intake_busy
        self.lease = lease
        self.client = client or httpx.AsyncClient(
            transport=_transport(httpx.Limits(max_connections=settings.forward_concurrency * 2)),
            timeout=settings.forward_timeout_s,
            follow_redirects=False,
        )
        self._slots = asyncio.Semaphore(settings.forward_concurrency)
        self._wake = asyncio.Event()
        self._lanes: dict[str, asyncio.Task[None]] = {}
        self._lane_failures: dict[str, int] = {}  # lanes that failed in a row, per DSN

    def wake(self, dsn: str | None = None) -> None:
        """Tell the forwarder rows are committed (for `dsn`). A DSN whose lane is running needs
        nothing: the lane reads on until that DSN's rows run out; so the outbox is not queried
        once per accepted envelope."""
        if dsn is None or dsn not in self._lanes:
            self._wake.set()

    async def run(self) -> None:
        failed_in_a_row = 0
        try:
            while True:
                self._wake.clear()
                try:
                    await self._start_lanes()
                    failed_in_a_row = 0
                except Exception:
                    failed_in_a_row += 1
                    wait = backoff(failed_in_a_row, POLL_SECONDS, self.settings.retry_max_s)
                    logger.exception("the forwarder failed unexpectedly; trying again in %.1f s", wait)
                    await asyncio.sleep(wait)
                    continue
                # Not asyncio.wait_for: on Python 3.11 it can swallow a cancellation that arrives
                # as the event is set (CPython gh-86296), and shutdown would then hang.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(POLL_SECONDS):
                        await self._wake.wait()
        finally:
            await self._stop_lanes()
            if self.lease is not None:
                await anyio.to_thread.run_sync(self.lease.release)

    async def _start_lanes(self) -> None:
        """A lane for each DSN with rows due (none without the lease)."""
        if self.lease is not None and not await anyio.to_thread.run_sync(self.lease.keep):
            return await self._stop_lanes()  # another worker forwards (or the database is away)
        try:
            dsns = await anyio.to_thread.run_sync(self.store.pending_dsns)
        except SQLAlchemyError as exc:  # the database is away: the rows wait there
            logger.warning("the forwarder cannot read the outbox: %s", exc)
            dsns = []
        for dsn in dsns:
            if dsn not in self._lanes:
                self._lanes[dsn] = asyncio.create_task(self._lane(dsn), name=f"lookout-lane-{dsn}")

    async def _stop_lanes(self) -> None:
        lanes = list(self._lanes.values())
        for lane in lanes:
            lane.cancel()
        await asyncio.gather(*lanes, return_exceptions=True)

    async def _lane(self, dsn: str) -> None:
        try:
            await self._deliver_all(dsn)
            self._lane_failures.pop(dsn, None)
        except Exception as exc:
            # The database went away, or something nobody expected: this lane rests, then the main
            # loop starts it again (without the pause, a persistent fault would restart it in a spin).
            failures = self._lane_failures[dsn] = self._lane_failures.get(dsn, 0) + 1
            wait = backoff(failures, POLL_SECONDS, self.settings.retry_max_s)
            if isinstance(exc, SQLAlchemyError):
                logger.warning("the forwarder's lane for %s stopped (%s); again in %.1f s", dsn, exc, wait)
            else:
                logger.exception("the forwarder's lane for %s failed; again in %.1f s", dsn, wait)
            await asyncio.sleep(wait)
        finally:
            del self._lanes[dsn]
            self._wake.set()  # rows may have arrived while this lane was finishing

    async def _deliver_all(self, dsn: str) -> None:
        """Deliver the DSN's rows in order until none is due."""
        target = Dsn.parse(dsn)
        while rows := await anyio.to_thread.run_sync(self.store.next_rows, dsn, LANE_BATCH):
            done: list[int] = []
            due: float | None = None
            try:
                for row in rows:
                    await self._give_way()
                    if (due := await self._deliver(target, row)) is not None:
                        break  # keep order: nothing after a deferred row goes first
                    done.append(row.id)
            finally:
                # Shielded: a lane stopped mid-way (shutdown, the lease gone) still removes
                # what it delivered, or it would be sent again.
                await asyncio.shield(self._remove(done))
            if due is not None:
                await asyncio.sleep(max(0.0, due - self.clock()))

    async def _remove(self, delivered: list[int]) -> None:
        """Remove delivered rows, retrying while the database is away: a row left behind would be
        sent again, so nothing else is sent before they are gone."""
        wait = 0.1
        while True:
            try:
                return await anyio.to_thread.run_sync(self.store.remove, delivered)
            except SQLAlchemyError as exc:
                logger.warning("delivered rows could not be removed yet (retrying): %s", exc)
                await asyncio.sleep(wait)
                wait = min(wait * 2, POLL_SECONDS)

    async def _give_way(self) -> None:
        waited = 0.0
        while waited < MAX_YIELD_S and self.intake_busy():
            await asyncio.sleep(YIELD_STEP_S)
            waited += YIELD_STEP_S

    async def _deliver(self, target: Dsn, row: Delivery) -> float | None:
        """One attempt. None when the row is finished with (delivered or refused for good);
        otherwise the time at which to try it again."""
        if row.next_attempt_at > self.clock():
            return row.next_attempt_at
        headers = {"Content-Type": "application/x-sentry-envelope", "X-Sentry-Auth": target.auth_header}
        if row.content_encoding:
            headers["Content-Encoding"] = row.content_encoding
        try:
            async with self._slots:
                response = await self.client.post(target.envelope_url, content=row.body, headers=headers)
        except httpx.HTTPError as exc:
            return await self._retry(row, f"{type(exc).__name__}: {exc}")
        except Exception as exc:  # the HTTP stack failed on this row in a way nobody expected
            logger.exception("sending envelope %s failed unexpectedly", row.id)
            return await self._retry(row, f"{type(exc).__name__}: {exc}")
        self.limits.update(row.dsn, response.status_code, response.headers)
        if response.is_success:
            self.stats.forwarded += 1
            return None
        if response.status_code == 429:
            wait = self.limits.retry_after(row.dsn, row.categories) or self.limits.default_retry_after
            return await self._defer(row, wait, "429 rate limited")
        if response.status_code >= 500:
            return await self._retry(row, f"{response.status_code} {_reason(response)}")
        reason = _reason(response)
        self.stats.dropped[str(response.status_code)] += 1
        logger.warning("upstream refused envelope %s for good: %s %s", row.id, response.status_code, reason)
        return None

    async def _retry(self, row: Delivery, error: str) -> float:
        delay = backoff(row.attempts, self.settings.retry_base_s, self.settings.retry_max_s)
        logger.info("delivery of envelope %s failed (%s); retrying in %.1f s", row.id, error, delay)
        return await self._defer(row, delay, error)

    async def _defer(self, row: Delivery, wait: float, error: str) -> float:
        """Record a failed attempt; returns when the row is due again."""
        self.stats.retrying += 1
        due = self.clock() + wait
        await anyio.to_thread.run_sync(self.store.defer, row.id, due, error)
        return due

    async def aclose(self) -> None:
        await self.client.aclose()


def _transport(limits: httpx.Limits) -> httpx.AsyncBaseTransport:
    """httpx's API over aiohttp's connection handling when `httpx-aiohttp` is installed (the extra
    `reflex-lookout[fast]`, which Lookout installs): measured 1.3–1.8× the drain rate of httpx's own
    transport (bench/tunnel.py); else httpx's own."""
    try:
        from httpx_aiohttp import AiohttpTransport
    except ImportError:
        return httpx.AsyncHTTPTransport(limits=limits)
    return AiohttpTransport(limits=limits)
