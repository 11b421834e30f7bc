"""The composition root: the only module that wires the parts together (tunnel, outbox, forwarder,
inbox, ingest, alerts, background work), once per backend process, from the settings.

    browser SDK ──POST──▶ tunnel ──commit──▶ outbox (SQL) ──forwarder──▶ Sentry
    server SDK ──OutboxTransport──commit──▲       └── status "local" when no SENTRY_DSN: the
                                                      feeder reads it, symbolicated, into the inbox
    inbox ingest txn ──▶ alert rows (app/alerts/triggers.py) ──alert sender (lease holder)──▶ e-mail, webhooks
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import sentry_sdk

from app import db
from app.alerts.channels import sync_env_channels
from app.alerts.sender import AlertSender
from app.inbox.projects import settle_local_dsn
from app.inbox.retention import Caps, Retention
from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from app.ingest.quotas import Quotas
from app.ingest.security_reports import SecurityReports
from app.ingest.store import InboxStore
from app.ingest.tag_backfill import TagBackfill
from app.monitoring import server
from app.monitoring.forwarder import Forwarder
from app.monitoring.outbox import OutboxStore
from app.monitoring.stats import TunnelStats
from app.monitoring.tunnel import Tunnel
from app.settings import SETTINGS
from app.sourcemaps.dev_modules import with_dev_server
from app.sourcemaps.library import MapLibrary
from app.sourcemaps.symbolicate import Symbolicator
from reflex_lookout.background import Lease, supervise
from reflex_lookout.protocol.ratelimits import RateLimits

limits = RateLimits()
stats = TunnelStats()
store = OutboxStore(db.engine())
forwarder: Forwarder | None = None
# Browser frames are mapped with the stored builds' maps (and in dev mode the dev server's: run_inbox).
library = MapLibrary(db.engine())
symbolicator = Symbolicator(library)
inbox = InboxStore(db.engine(), symbolicator)
feeder: InboxFeeder | None = None  # local mode: reads local rows into the inbox
sender: AlertSender | None = None  # local mode: delivers the alerts the inbox makes due


def _wake_readers(dsn: str) -> None:
    """An envelope was committed: whoever takes it from the outbox can start."""
    if forwarder is not None:
        forwarder.wake(dsn)
    if feeder is not None:
        feeder.wake(dsn)


def _wake_sender() -> None:
    """The feeder committed a batch, and with it any alert it made due."""
    if sender is not None:
        sender.wake()


tunnel = Tunnel(SETTINGS, store, limits, stats, on_commit=_wake_readers)
if SETTINGS.dsn is None:
    tunnel.admit = Quotas(db.engine()).admit  # each project's quotas, counted in the database
ingest = Ingest(tunnel, inbox)  # Sentry's /api/<project>/envelope/ and /store/, into the inbox
security = SecurityReports(ingest)  # Sentry's /api/<project>/security/: CSP reports, into the inbox


@contextlib.asynccontextmanager
async def run_server_sdk() -> AsyncIterator[None]:
    """Lifespan task: sentry-sdk for this process, its envelopes committed to the outbox; what is
    still queued when the process stops is committed before it exits."""
    loop = asyncio.get_running_loop()

    def committed(dsn: str) -> None:  # on the transport's thread
        with contextlib.suppress(RuntimeError):  # the loop has closed: the next start delivers it
            loop.call_soon_threadsafe(_wake_readers, dsn)

    transport = server.start(SETTINGS, store, on_commit=committed)
    try:
        yield
    finally:
        if transport is not None:
            await asyncio.to_thread(sentry_sdk.flush, 5.0)


@contextlib.asynccontextmanager
async def run_inbox(app: Any = None) -> AsyncIterator[None]:
    """Lifespan task, local mode (no SENTRY_DSN): the local DSN's project exists, and what the
    outbox holds for it is read into the inbox while the backend runs. `app`: the rx.App, which
    Reflex passes to a lifespan task that asks for it. The alert sender runs beside the feeder:
    the environment's channels are checked (SettingsError) and stored first."""
    global feeder, sender
    tasks: list[asyncio.Task[None]] = []
    if SETTINGS.dsn is None:
        await asyncio.to_thread(inbox.ensure_project, settle_local_dsn(SETTINGS, db.engine()))
        if app is not None:  # dev mode: the dev server's modules too, with the app's pages
            symbolicator.lookup = with_dev_server(library, app)
        feeder = InboxFeeder(store, inbox, retention=Retention(db.engine(), Caps.from_settings(SETTINGS)),
                             lease=Lease(db.engine(), "inbox-feeder"), on_fed=_wake_sender)
        await asyncio.to_thread(sync_env_channels, db.engine(), SETTINGS)
        sender = AlertSender(db.engine(), SETTINGS, Lease(db.engine(), "alert-sender"))
        with sentry_sdk.isolation_scope():  # their queries and requests are no one's breadcrumbs
            tasks = [supervise("lookout-inbox-feeder", feeder.run), supervise("lookout-alert-sender", sender.run)]
            # Events stored before migration 0015: their tags, indexed once; it ends when done (not supervised).
            backfill = TagBackfill(db.engine(), Lease(db.engine(), "tag-backfill"))
            tasks.append(asyncio.create_task(backfill.run(), name="lookout-tag-backfill"))
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@contextlib.asynccontextmanager
async def run_forwarder() -> AsyncIterator[None]:
    """Lifespan task: deliver the outbox while the backend runs (only when a DSN is set)."""
    global forwarder
    task = None
    if SETTINGS.dsn is not None:
        forwarder = Forwarder(store, SETTINGS, limits, stats, intake_busy=tunnel.busy,
                              lease=Lease(db.engine(), "forwarder"))
        # A scope of its own: its HTTP requests and queries must not become other events' breadcrumbs.
        with sentry_sdk.isolation_scope():
            task = supervise("lookout-forwarder", forwarder.run)
    try:
        yield
    finally:
        if task is not None and forwarder is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            await forwarder.aclose()
        await tunnel.writer.close()
