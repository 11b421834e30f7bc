"""Delivers due alerts to their channels, while this worker holds the "alert-sender" lease.

    alert rows (fanned_out false) ──fan-out──▶ one alert_delivery row per channel
    per channel: its due rows, oldest first, up to DIGEST_LIMIT[kind] ──▶ ONE message (one alert,
    or a digest listing them) ──▶ sent: the rows are deleted · failed: retried after a backoff

Each turn (on a wake from the inbox feeder's commit, or every POLL_S) fans new alerts out, in one
transaction per batch (delivery_queue.py), then starts a send for each channel that has rows due, is
not sending already and has a token left (see `Pace`). Channels send concurrently, so a down or slow
webhook holds up no other; database work runs in threads, off the event loop.

Durability: a delivery row is deleted only after its message was accepted (a 2xx answer, an SMTP
server's acceptance), so a crash between send and delete sends it again after the restart (at least
once; every message carries its alerts' dedupe keys for the receiver to drop a repeat). A failed send
keeps its rows, with `attempts` + 1 and `next_attempt_at` = now + RETRY_BASE_S doubling up to
RETRY_MAX_S, jittered — forever: nothing is dropped. Only deleting a channel drops what it still had
to send (there is nowhere to send it).

Pacing is what makes digests: a channel may get PACE_BURST messages at once, then one more every
PACE_EVERY_S (pacing.py). A quiet project's alert goes at once (after LINGER_S, in which alerts due
with it, as a burst's are, join its message); in a storm, what falls due while a channel has no
token waits and goes out as one digest when the next token comes. So in any T seconds a channel gets
at most PACE_BURST + T / PACE_EVERY_S messages (10 in a minute), whatever the number of alerts, each
listing up to DIGEST_LIMIT[kind] of them; N alerts due at once make ceil(N / DIGEST_LIMIT[kind]) messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import ssl
import time
from collections.abc import Callable, Sequence

import anyio.to_thread
import sqlalchemy
from sqlalchemy import delete, update

from app import routes
from app.alerts import channels, mail, messages, outbound, triggers
from app.alerts.alert import MONITOR_RULES, AlertItem, Channel, Delivered
from app.alerts.delivery_queue import DUE, FAN_OUT_BATCH, Due, drop_orphans, due_channels, fan_out
from app.alerts.pacing import Pace
from app.alerts.tables import DELIVERIES
from app.settings import Settings
from reflex_lookout.background import Lease
from reflex_lookout.protocol.retry import backoff

logger = logging.getLogger(__name__)

LINGER_S = 0.2  # a channel's oldest due alert waits this long for others due with it (a burst's)
POLL_S = 0.5  # how often a turn runs without a wake (alerts committed by another worker, retries due)
RETRY_BASE_S = 1.0  # a failed message's alerts are tried again after this, doubling ...
RETRY_MAX_S = 60.0  # ... up to this (each jittered to ½–1 of it)
PRUNE_EVERY_S = 60.0  # how often sent alerts past their keeping time are deleted (triggers.prune)
SEND_TIMEOUT_S = 10.0  # one webhook request or SMTP conversation
SMTP_AT_ONCE = 4  # e-mails sent at once (each holds a thread: smtplib blocks)


class AlertSender:
    def __init__(self, engine: sqlalchemy.Engine, settings: Settings, lease: Lease,
                 clock: Callable[[], float] = time.time, rand: Callable[[], float] = random.random,
                 smtp_context: ssl.SSLContext | None = None, timeout_s: float = SEND_TIMEOUT_S,
                 linger_s: float = LINGER_S) -> None:
        """`lease`: with several workers, only its holder sends. `clock` and `rand` (the retries'
        jitter) are for tests; `smtp_context` verifies the SMTP server's TLS (default: the system's)."""
        self.engine, self.settings, self.lease, self.linger_s = engine, settings, lease, linger_s
        self.clock, self.rand, self.smtp_context, self.timeout_s = clock, rand, smtp_context, timeout_s
        self.policy = outbound.OutboundPolicy.from_entries(settings.webhook_allow)
        self.smtp = mail.SmtpServer.from_url(settings.smtp_url) if settings.smtp_url else None
        self._wake = asyncio.Event()
        self._smtp_slots = asyncio.Semaphore(SMTP_AT_ONCE)
        self._paces: dict[int, Pace] = {}
        self._sending: dict[int, asyncio.Task[int]] = {}  # per channel id, its message under way
        self._pruned_at = float("-inf")

    def wake(self) -> None:
        """Alerts may have been committed: turn now rather than at the next poll. Call it on the
        event loop's thread (asyncio.Event is not thread-safe)."""
        self._wake.set()

    async def run(self) -> None:
        """Turn on every wake, at least every POLL_S, until cancelled; a failed turn (the database
        away) is logged and tried again after a growing pause."""
        failed_in_a_row = 0
        try:
            while True:
                self._wake.clear()
                try:
                    await self._turn()
                    failed_in_a_row = 0
                except Exception as exc:
                    wait = backoff(failed_in_a_row, POLL_S, RETRY_MAX_S, self.rand)
                    failed_in_a_row += 1
                    logger.warning("alert sender: %s; trying again in %.1f s", exc, wait,
                                   exc_info=not isinstance(exc, sqlalchemy.exc.SQLAlchemyError))
                    await asyncio.sleep(wait)
                    continue
                with contextlib.suppress(TimeoutError):  # not wait_for: see Forwarder.run
                    async with asyncio.timeout(POLL_S):
                        await self._wake.wait()
        finally:
            sending = list(self._sending.values())
            for task in sending:
                task.cancel()  # its rows stay: sent again by the next holder
            await asyncio.gather(*sending, return_exceptions=True)
            await anyio.to_thread.run_sync(self.lease.release)

    async def send_once(self) -> int:
        """One turn, waiting for the messages it started: how many went through (for tests; `run`
        does not wait for them)."""
        started = await self._turn()
        return sum(await asyncio.gather(*started))

    async def _turn(self) -> list[asyncio.Task[int]]:
        """Fan out, then start a message for each channel due (past its linger, or a full digest),
        not sending and with a token."""
        now = self.clock()
        due, more = await anyio.to_thread.run_sync(self._prepare, now)
        if more:
            self._wake.set()  # more alerts wait to be fanned out: the next turn comes at once
        started = []
        for channel, waiting, since in due:
            if channel.id in self._sending:
                continue
            full = waiting >= messages.DIGEST_LIMIT[channel.kind]
            if not full and now - since < self.linger_s:
                asyncio.get_running_loop().call_later(since + self.linger_s - now, self._wake.set)
                continue  # alerts due with it (a burst's) may still come, to go in the same message
            if not self._paces.setdefault(channel.id, Pace(now)).take(now):
                continue  # what is due waits for the next token, and goes out then as one digest
            task = asyncio.create_task(self._send(channel), name=f"lookout-alert-channel-{channel.id}")
            self._sending[channel.id] = task
            task.add_done_callback(functools.partial(self._sent, channel.id))
            started.append(task)
        return started

    def _sent(self, channel_id: int, task: asyncio.Task[int]) -> None:
        del self._sending[channel_id]
        if not task.cancelled() and (error := task.exception()) is not None:
            logger.warning("alert sender: channel %s: %s", channel_id, error, exc_info=error)
        self._wake.set()  # the channel may have more due, and a token for it

    def _prepare(self, now: float) -> tuple[list[tuple[Channel, int, float]], bool]:
        """In a thread: nothing without the lease; else prune when due, fan out a batch, and the
        enabled channels with deliveries due (and whether more alerts wait to be fanned out)."""
        if not self.lease.keep():
            return [], False
        if now - self._pruned_at >= PRUNE_EVERY_S:
            with self.engine.begin() as connection:
                pruned = triggers.prune(connection, now) + drop_orphans(connection)
            self._pruned_at = now
            logger.debug("alert sender: pruned %d rows", pruned)
        with self.engine.begin() as connection:
            more = fan_out(connection, now) == FAN_OUT_BATCH
            return due_channels(connection, now), more

    async def _send(self, channel: Channel) -> int:
        """One message to `channel` with its due alerts; 1 when it went through."""
        due = await anyio.to_thread.run_sync(self._due, channel, self.clock())
        if not due:
            return 0
        delivered = await self._deliver(channel, [d.item for d in due])
        if not delivered.ok:
            logger.warning("alert channel %s (%s): %s", channel.id, channel.kind, delivered.error)
        await anyio.to_thread.run_sync(self._settle, channel, due, delivered, self.clock())
        return int(delivered.ok)

    async def _deliver(self, channel: Channel, items: Sequence[AlertItem]) -> Delivered:
        try:
            if channel.kind != "email":
                return await outbound.post(channel.target, messages.webhook_request(channel, items), self.policy,
                                           self.timeout_s)
            if not self.settings.can_mail or self.smtp is None:  # (None: no LOOKOUT_SMTP_URL)
                return Delivered(False, "E-mail needs LOOKOUT_SMTP_URL and LOOKOUT_ALERT_FROM to be set.")
            message = messages.email_message(items, self.settings.alert_from, channel.target)
            async with self._smtp_slots:  # a hung SMTP server ties up a few threads, not all of them
                return await anyio.to_thread.run_sync(mail.send, self.smtp, message, self.timeout_s,
                                                      self.smtp_context, abandon_on_cancel=True)
        except Exception as exc:  # a bug here is this message's failure, retried like any other
            logger.exception("alert channel %s: the message could not be made or sent", channel.id)
            return Delivered(False, f"The message could not be sent ({type(exc).__name__}).")

    def _due(self, channel: Channel, now: float) -> list[Due]:
        """The channel's deliveries due, oldest alert first, as many as one message lists."""
        with self.engine.connect() as connection:
            rows = connection.execute(DUE, {"channel_id": channel.id, "now": now,
                                            "limit": messages.DIGEST_LIMIT[channel.kind]}).all()
        return [Due(row.delivery_id, row.attempts, self._item(row)) for row in rows]

    def _item(self, row: sqlalchemy.Row) -> AlertItem:
        path = (routes.ALERTS if row.rule == "test" else routes.MONITORS if row.rule in MONITOR_RULES
                else f"{routes.ISSUE}?id={row.issue_id}")
        project = row.project or ("Lookout" if row.rule == "test" else f"project {row.project_id}")
        return AlertItem(dedupe_key=row.dedupe_key, rule=row.rule, reason=row.reason, project=project,
                         issue_id=row.issue_id, title=row.title, level=row.level, environment=row.environment,
                         release=row.release, culprit=row.culprit, first_seen=row.first_seen,
                         last_seen=row.last_seen, event_count=row.event_count,
                         link=self.settings.public_url + path)

    def _settle(self, channel: Channel, due: Sequence[Due], delivered: Delivered, now: float) -> None:
        """Sent: its rows go. Failed: they wait for a backoff that grows with their attempts."""
        ids = [d.delivery_id for d in due]
        with self.engine.begin() as connection:
            if delivered.ok:
                connection.execute(delete(DELIVERIES).where(DELIVERIES.c.id.in_(ids)))
            else:
                wait = backoff(max(d.attempts for d in due), RETRY_BASE_S, RETRY_MAX_S, self.rand)
                connection.execute(update(DELIVERIES).where(DELIVERIES.c.id.in_(ids))
                                   .values(attempts=DELIVERIES.c.attempts + 1, next_attempt_at=now + wait))
            channels.record_delivery(connection, channel.id, delivered, now)
