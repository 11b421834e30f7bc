"""The composition root: the only module that wires the parts together (the monitoring plugin's
runtime: tunnel, outbox, forwarder, server SDK; and Lookout's inbox, ingest, alerts, background
work), once per backend process, from the settings. The plugin builds no runtime of its own in a
process that has this one (reflex_lookout/runtime.py `current`).

    browser SDK ──POST──▶ tunnel ──commit──▶ outbox (SQL) ──forwarder──▶ Sentry
    server SDK ──OutboxTransport──commit──▲       └── status "local" when no SENTRY_DSN: the
                                                      feeder reads it, symbolicated, into the inbox
    inbox ingest txn ──▶ alert rows (app/alerts/triggers.py) ──alert sender (lease holder)──▶ e-mail, webhooks
                     └─▶ tag queue ──tag counter (lease holder)──▶ tag index (app/ingest/tag_counter.py)
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
from app.inbox.retention import Caps, Retention
from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from app.ingest.quotas import Quotas
from app.ingest.security_reports import SecurityReports
from app.ingest.store import InboxStore
from app.ingest.tag_backfill import TagBackfill
from app.ingest.tag_counter import TagCounter
from app.local_inbox import outbox_store
from app.projects.registry import settle_local_dsn
from app.settings import SETTINGS
from app.sourcemaps.dev_modules import with_dev_server
from app.sourcemaps.library import MapLibrary
from app.sourcemaps.symbolicate import Symbolicator
from reflex_lookout.background import Lease, supervise
from reflex_lookout.runtime import Runtime

# Browser frames are mapped with the stored builds' maps (and in dev mode the dev server's: run_inbox).
library = MapLibrary(db.engine())
symbolicator = Symbolicator(library)
inbox = InboxStore(db.engine(), symbolicator)
feeder: InboxFeeder | None = None  # local mode: reads local rows into the inbox
sender: AlertSender | None = None  # local mode: delivers the alerts the inbox makes due
tag_counter: TagCounter | None = None  # local mode: adds the tag counts ingest queued into the index


def _wake_feeder(dsn: str) -> None:
    """An envelope was committed (the runtime wakes the forwarder): local rows are the feeder's."""
    if feeder is not None:
        feeder.wake(dsn)


def _fed() -> None:
    """The feeder committed a batch, and with it any alert it made due and its tag counts."""
    if sender is not None:
        sender.wake()
    if tag_counter is not None:
        tag_counter.wake()


# The plugin's runtime with Lookout's destination (docs/design/reflex-plugin.md §4): the local DSN
# (SETTINGS.reporting_dsn), unread local rows counted as waiting, the feeder woken, quotas admitted.
runtime = Runtime(SETTINGS, outbox_store(db.engine()), on_commit=_wake_feeder, quiet_loggers=("app.ingest.feeder",))
store, tunnel = runtime.store, runtime.tunnel
run_server_sdk, run_forwarder = runtime.run_server_sdk, runtime.run_forwarder
if SETTINGS.dsn is None:
    tunnel.admit = Quotas(db.engine()).admit  # each project's quotas, counted in the database
# Sentry's /api/<project>/envelope/ and /store/, into the inbox; in local mode it gives the tunnel each
# project's filters and scrubbing, applied before the first write (app/ingest/before_write.py).
ingest = Ingest(tunnel, inbox)
security = SecurityReports(ingest)  # Sentry's /api/<project>/security/: CSP reports, into the inbox


@contextlib.asynccontextmanager
async def run_inbox(app: Any = None) -> AsyncIterator[None]:
    """Lifespan task, local mode (no SENTRY_DSN): the local DSN's project exists, and what the
    outbox holds for it is read into the inbox while the backend runs. `app`: the rx.App, which
    Reflex passes to a lifespan task that asks for it. The alert sender runs beside the feeder:
    the environment's channels are checked (SettingsError) and stored first."""
    global feeder, sender, tag_counter
    tasks: list[asyncio.Task[None]] = []
    if SETTINGS.dsn is None:
        await asyncio.to_thread(inbox.ensure_project, settle_local_dsn(SETTINGS, db.engine()))
        if app is not None:  # dev mode: the dev server's modules too, with the app's pages
            symbolicator.lookup = with_dev_server(library, app)
        # On PostgreSQL every worker feeds, claiming its rows (app/ingest/feeder.py); on SQLite, whose
        # writes take turns anyway, the holder of the feeder's lease. Retention: one worker at a time.
        parallel = db.engine().dialect.name == "postgresql"
        feeder = InboxFeeder(store, inbox, retention=Retention(db.engine(), Caps.from_settings(SETTINGS)),
                             lease=None if parallel else Lease(db.engine(), "inbox-feeder"), on_fed=_fed,
                             retention_lease=Lease(db.engine(), "inbox-retention"))
        await asyncio.to_thread(sync_env_channels, db.engine(), SETTINGS)
        sender = AlertSender(db.engine(), SETTINGS, Lease(db.engine(), "alert-sender"))
        with sentry_sdk.isolation_scope():  # their queries and requests are no one's breadcrumbs
            tag_counter = TagCounter(db.engine(), Lease(db.engine(), "tag-counter"))
            tasks = [supervise("lookout-inbox-feeder", feeder.run), supervise("lookout-alert-sender", sender.run),
                     supervise("lookout-tag-counter", tag_counter.run)]
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

