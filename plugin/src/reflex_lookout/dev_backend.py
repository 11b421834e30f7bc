"""The dev overlay's backend, added to the host's `rx.App` under `reflex run` (dev mode) only, from
`Monitoring.post_compile` (as backend.py adds the tunnel): the overlay's routes (dev_routes.py), the
memory they read (dev_inbox.py), and the server SDK's envelopes kept there too (dev_transport.py).

With a DSN, the runtime (backend.py) reports as always and this adds a copy for the overlay. Without
one, nothing is reported anywhere, and this alone runs: the server SDK's transport is the overlay's,
the pages' browser SDK posts to the overlay's envelope route, and the exception handlers report the
failed event into its trace. With SENTRY_SPOTLIGHT set, each browser envelope goes on to Spotlight's
sidecar (spotlight.py), and the server SDK sends its own there (sentry-sdk's `spotlight` option).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from reflex.app import App

from reflex_lookout import runtime, server
from reflex_lookout.dev_inbox import DevInbox, PageJson, route_key
from reflex_lookout.dev_routes import DevRoutes
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.sourcemaps import pages


def attach(app: App, settings: MonitoringSettings, built: runtime.Runtime | None) -> DevInbox:
    """The overlay's routes on `app`, innermost (the app's own routes keep precedence), and its copy of
    the server SDK's envelopes: through `built` (the runtime, with a DSN), else a server SDK of its own."""
    inbox = DevInbox(pages=lambda: pages.to_json(pages.page_sources(app)), routes=lambda: route_pages(app))
    relay = None
    if settings.spotlight:
        from reflex_lookout.spotlight import SpotlightRelay

        relay = SpotlightRelay(settings.spotlight)
    routes = DevRoutes(settings, inbox, Path.cwd(), relay.send if relay is not None else None)  # the browser's
    theirs = app.api_transformer
    listed: list[Any] = [] if theirs is None else list(theirs) if isinstance(theirs, list | tuple) else [theirs]
    app.api_transformer = [routes.asgi, *listed]
    relay_send = relay.send if relay is not None else None
    if built is not None:
        built.dev, built.dev_relay = inbox, relay_send
    elif settings.server:
        @contextlib.asynccontextmanager
        async def run_dev_server_sdk() -> AsyncIterator[None]:
            """Lifespan task: sentry-sdk for this process, its envelopes kept for the overlay alone."""
            transport = server.start(settings, None, on_commit=lambda dsn: None, dev=inbox, dev_relay=relay_send)
            try:
                yield
            finally:
                if transport is not None:
                    transport.flush(2.0)

        app.register_lifespan_task(run_dev_server_sdk)
    if relay is not None:
        @contextlib.asynccontextmanager
        async def run_spotlight_relay() -> AsyncIterator[None]:
            """Lifespan task: what is still queued for Spotlight is posted (for a moment) when the backend stops."""
            try:
                yield
            finally:
                await relay.aclose()

        app.register_lifespan_task(run_spotlight_relay)
    return inbox


def route_pages(app: App) -> Mapping[str, PageJson]:
    """The Python page behind each of the app's static routes, by `route_key` ("index", "orders")."""
    found: dict[str, PageJson] = {}
    for route, page in app._unevaluated_pages.items():
        source = pages.page_source(page.component)
        if source is not None and "[" not in route:
            found[route_key(route)] = source.to_json()
    return found
