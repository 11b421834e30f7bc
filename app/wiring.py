"""The composition root: the only module that wires the parts together (the monitoring plugin's
runtime: tunnel, outbox, forwarder, server SDK; and Lookout's inbox, ingest, alerts, background
work), once per backend process, from the settings. The plugin builds no runtime of its own in a
process that has this one (reflex_lookout/runtime.py `current`).

    browser SDK ──POST──▶ tunnel ──commit──▶ outbox (SQL) ──forwarder──▶ Sentry
    server SDK ──OutboxTransport──commit──▲       └── status "local" when no SENTRY_DSN: the
                                                      feeder reads it, symbolicated, into the inbox
    inbox ingest txn ──▶ alert rows (app/alerts/triggers.py) ──alert sender (lease holder)──▶ e-mail, webhooks
                     └─▶ tag queue ──tag counter (lease holder)──▶ tag index (app/ingest/tag_counter.py)
    check-ins ──▶ monitors; monitor watcher (lease holder, every 15 s) ──▶ missed/timeout + alert rows (app/monitors/)
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any

import sentry_sdk
import sqlalchemy
from starlette.applications import Starlette
from starlette.types import ASGIApp

from app import db
from app.alerts.channels import sync_env_channels
from app.alerts.sender import AlertSender
from app.console import state as console
from app.inbox import json_api
from app.inbox.reading import InboxReader
from app.inbox.retention import Caps, Retention
from app.ingest.endpoints import Ingest
from app.ingest.feeder import InboxFeeder
from app.ingest.quotas import Quotas
from app.ingest.security_reports import SecurityReports
from app.ingest.store import InboxStore
from app.ingest.tag_backfill import TagBackfill
from app.ingest.tag_counter import TagCounter
from app.local_inbox import outbox_store
from app.monitors.watcher import MonitorWatcher
from app.projects.registry import settle_local_dsn
from app.settings import SETTINGS, Settings
from app.sourcemaps import upload_api
from app.sourcemaps.dev_modules import with_dev_server
from app.sourcemaps.library import MapLibrary
from app.sourcemaps.symbolicate import Symbolicator
from app.webapi import routes as webapi_routes
from reflex_lookout.background import Lease, supervise
from reflex_lookout.runtime import Runtime


class Lookout:
    """Lookout's parts in one process: built once (`lookout()`), from `settings` and `engine`, when
    the backend's ASGI app is made (app/app.py `LookoutApp.__call__`; app/standalone's entry points
    at their start). They take their route apps and lifespan tasks from it; a test that needs
    other parts builds a `Lookout` of its own (`app.wire(...)`) instead of patching modules."""

    def __init__(self, settings: Settings = SETTINGS, engine: sqlalchemy.Engine | None = None) -> None:
        self.settings = settings
        self.engine = engine = engine if engine is not None else db.engine()
        # Browser frames are mapped with the stored builds' maps (and in dev mode the dev server's: run_inbox).
        self.library = MapLibrary(engine)
        self.symbolicator = Symbolicator(self.library)
        self.inbox = InboxStore(engine, self.symbolicator)
        self.feeder: InboxFeeder | None = None  # local mode: reads local rows into the inbox
        self.sender: AlertSender | None = None  # local mode: delivers the alerts the inbox makes due
        self.tag_counter: TagCounter | None = None  # local mode: adds the tag counts ingest queued into the index
        self.monitor_watcher: MonitorWatcher | None = None  # local mode: cron monitors' missed and overrun runs
        # The plugin's runtime with Lookout's destination (docs/design/reflex-plugin.md §4): the local DSN
        # (settings.reporting_dsn), unread local rows counted as waiting, the feeder woken, quotas admitted.
        self.runtime = Runtime(settings, outbox_store(engine), on_commit=self._wake_feeder,
                               quiet_loggers=("app.ingest.feeder",))
        self.store, self.tunnel = self.runtime.store, self.runtime.tunnel
        self.run_server_sdk, self.run_forwarder = self.runtime.run_server_sdk, self.runtime.run_forwarder
        if settings.dsn is None:
            self.tunnel.admit = Quotas(engine).admit  # each project's quotas, counted in the database
        # Sentry's /api/<project>/envelope/ and /store/, into the inbox; in local mode it gives the tunnel each
        # project's filters and scrubbing, applied before the first write (app/ingest/before_write.py).
        self.ingest = Ingest(self.tunnel, self.inbox)
        self.security = SecurityReports(self.ingest)  # Sentry's /api/<project>/security/: CSP reports, into the inbox

    def inbox_api(self) -> Starlette:
        """The inbox's JSON API and the sign-in form's routes (GET {tunnel_path}/stats among them,
        behind the console's access check)."""
        return json_api.build(InboxReader(self.engine), console.accounts(), stats=self.tunnel.snapshot)

    def upload_api(self) -> Starlette:
        """sentry-cli's upload API (/api/0/...: source maps of other apps, with an upload token)."""
        return upload_api.build(self.engine, self.settings)

    def web_api(self) -> Callable[[ASGIApp], ASGIApp]:
        """Sentry's web API (/api/0/...: issues for sentry-cli and the MCP server, with an API token),
        in front of the app it is given: on the paths it shares with the upload API it takes API
        tokens and lets upload tokens through."""
        return webapi_routes.mount(self.engine, self.settings)

    def _wake_feeder(self, dsn: str) -> None:
        """An envelope was committed (the runtime wakes the forwarder): local rows are the feeder's."""
        if self.feeder is not None:
            self.feeder.wake(dsn)

    def _fed(self) -> None:
        """The feeder committed a batch, and with it any alert it made due and its tag counts."""
        if self.sender is not None:
            self.sender.wake()
        if self.tag_counter is not None:
            self.tag_counter.wake()

    @contextlib.asynccontextmanager
    async def run_inbox(self, app: Any = None) -> AsyncIterator[None]:
        """Lifespan task, local mode (no SENTRY_DSN): the local DSN's project exists, and what the
        outbox holds for it is read into the inbox while the backend runs. `app`: the rx.App, which
        Reflex passes to a lifespan task that asks for it. The alert sender runs beside the feeder:
        the environment's channels are checked (SettingsError) and stored first."""
        settings, engine = self.settings, self.engine
        tasks: list[asyncio.Task[None]] = []
        if settings.dsn is None:
            await asyncio.to_thread(self.inbox.ensure_project, settle_local_dsn(settings, engine))
            if app is not None:  # dev mode: the dev server's modules too, with the app's pages
                self.symbolicator.lookup = with_dev_server(self.library, app)
            # On PostgreSQL every worker feeds, claiming its rows (app/ingest/feeder.py); on SQLite, whose
            # writes take turns anyway, the holder of the feeder's lease. Retention: one worker at a time.
            parallel = engine.dialect.name == "postgresql"
            self.feeder = InboxFeeder(self.store, self.inbox, retention=Retention(engine, Caps.from_settings(settings)),
                                      lease=None if parallel else Lease(engine, "inbox-feeder"), on_fed=self._fed,
                                      retention_lease=Lease(engine, "inbox-retention"))
            await asyncio.to_thread(sync_env_channels, engine, settings)
            self.sender = AlertSender(engine, settings, Lease(engine, "alert-sender"))
            with sentry_sdk.isolation_scope():  # their queries and requests are no one's breadcrumbs
                self.tag_counter = TagCounter(engine, Lease(engine, "tag-counter"))
                self.monitor_watcher = MonitorWatcher(engine, Lease(engine, "monitor-watcher"), on_alert=self.sender.wake)
                tasks = [supervise("lookout-inbox-feeder", self.feeder.run),
                         supervise("lookout-alert-sender", self.sender.run),
                         supervise("lookout-tag-counter", self.tag_counter.run),
                         supervise("lookout-monitor-watcher", self.monitor_watcher.run)]
                # Events stored before migration 0015: their tags, indexed once; it ends when done (not supervised).
                backfill = TagBackfill(engine, Lease(engine, "tag-backfill"))
                tasks.append(asyncio.create_task(backfill.run(), name="lookout-tag-backfill"))
        try:
            yield
        finally:
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


@functools.cache
def lookout() -> Lookout:
    """This process's parts, from its settings and configured database: built on first use, once
    (when the backend starts: importing the app builds none of them)."""
    return Lookout()
