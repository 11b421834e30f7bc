"""Builds the Reflex app: pages, the tunnel's API routes, start-up tasks, and the origin guard outside
all of it. (Browser monitoring — the head's loader, the SDK's app wrap — is the reflex-lookout
plugin's, named in rxconfig.py.)"""

import logging

import reflex as rx
from starlette.types import ASGIApp

from app import startup, wiring
from app.components import error_boundary
from app.components.page import add_pages
from app.console import state as console
from app.monitoring.page_policy import PagePolicy
from app.origin_guard import OriginGuard
from app.pages import (  # noqa: F401 (imported for their pages, which they register)
    alerts,
    feedback,
    home,
    issue,
    issues,
    logs,
    monitors,
    not_found,
    project_settings,
    releases,
    sign_in,
    tokens,
    traces,
    try_errors,
)
from app.settings import SETTINGS
from app.sourcemaps import own_build
from app.webapi.cors import WebApiCors
from reflex_lookout import dev_backend, event_errors
from reflex_lookout.sourcemaps import to_sentry

logger = logging.getLogger(__name__)


def frontend_exception_handler(exception: Exception) -> None:
    """Reflex sends browser errors to the backend too; the browser SDK has already reported them."""
    logger.debug("browser error (reported by the browser SDK): %s", exception)


class LookoutApp(rx.App):
    def __call__(self) -> ASGIApp:
        """The backend's ASGI app, made once per backend process when it starts serving (the front
        end's compile, which imports this module, builds none of it). Its parts come from the
        composition root (app/wiring.py), built here, before Reflex's compile calls the monitoring
        plugin's post_compile, which must find the process's runtime. Reflex's backend app sits
        inside the origin guard, which must see each request before Reflex's CORS layer and
        socket.io do (api_transformers run inside that layer); its pages carry the report-only
        Content Security Policy (app/monitoring/page_policy.py); the web API's CORS (any origin,
        no credentials) replaces Reflex's on its paths."""
        if self.api_transformer is None:  # the first build in this process (a test may build twice)
            self.wire(wiring.lookout())
        return OriginGuard(WebApiCors(PagePolicy(super().__call__(), SETTINGS)))

    def wire(self, lookout: wiring.Lookout) -> None:
        """The route apps and lifespan tasks of this process's parts (a test gives parts of its own). The last api_transformer is
        outermost: the inbox API's routes match before the tunnel's and the ingest endpoints', and
        Sentry's web API is in front of all (on the paths it shares with the upload API it takes API
        tokens). The lifespan tasks follow startup.prepare_process: the schema must be current
        before sentry-sdk or the forwarder use the outbox."""
        self.api_transformer = [lookout.tunnel.asgi, lookout.ingest.asgi, lookout.security.asgi, lookout.inbox_api(),
                                lookout.upload_api(), lookout.web_api()]
        console.serve_in(connected=self._connected, tunnel_snapshot=lookout.tunnel.snapshot)
        self.register_lifespan_task(lookout.run_server_sdk)
        self.register_lifespan_task(lookout.run_forwarder)
        self.register_lifespan_task(lookout.run_inbox)
        if lookout.settings.shows_dev_overlay:  # `make run`: the plugin's dev overlay on Lookout's own pages
            dev_backend.attach(self, lookout.settings, lookout.runtime)

    def _connected(self, token: str) -> bool:
        """Whether a tab's websocket is still open in this process (a live page's watcher asks)."""
        namespace = self.event_namespace
        return namespace is None or token in namespace.token_to_sid


app = LookoutApp(
    frontend_exception_handler=frontend_exception_handler,
    backend_exception_handler=event_errors.backend_exception_handler,
)
app.app_wraps[error_boundary.APP_WRAP_KEY] = error_boundary.error_boundary
add_pages(app)  # every page, as its module declares it (@page_at)
app.register_lifespan_task(startup.prepare_process)
# Sentry mode: uploads that failed at build, in the background.
app.register_lifespan_task(to_sentry.retry_at_start, settings=own_build.upload_settings(), cli=own_build.SENTRY_CLI)
