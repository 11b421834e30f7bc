"""The backend side, attached to the host's `rx.App` from `Monitoring.post_compile`.

Reflex 0.10.1 calls every plugin's `post_compile(app=...)` in `App.__call__` (reflex/app.py:826), in
each backend process, after compiling and before it reads `api_transformer` (:836) and builds the
lifespan (:860) whose first task reads `backend_exception_handler` into the event processor (:771).
So a plugin can still add a route, a lifespan task and the exception handlers there: no second line
in the app module is needed.

What it adds: the runtime (runtime.py) on the app's outbox (`MonitoringSettings.outbox_url`: a
SQLite file in the app's hidden `.lookout/` folder by default): the tunnel as the innermost
`api_transformer` (the app's own routes keep precedence), the server SDK and the forwarder as
lifespan tasks, and the exception handlers (event_errors.py: the report is in the failed event's
trace). A process that already has a runtime (Lookout, the app this plugin comes from, builds its own,
with its destination) gets none of this a second time.

Never breaks its host: a failure here is logged once and the app serves without the monitoring.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from reflex.app import App, default_backend_exception_handler, default_frontend_exception_handler
from reflex_base.config import get_config
from reflex_base.event import EventSpec
from sentry_sdk.integrations.logging import ignore_logger, ignore_logger_for_sentry_logs

from reflex_lookout import event_errors, runtime
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.settings import MonitoringSettings

# The plugin's own records never become Sentry events, logs or breadcrumbs: reporting the tunnel's
# trouble through the same tunnel would feed on itself, and a handler's traceback is already an event.
logger = logging.getLogger("reflex_lookout")
ignore_logger(logger.name)
ignore_logger_for_sentry_logs(logger.name)
_logged: set[str] = set()


def log_once(key: str, message: str, *args: object) -> None:
    """A failure of the monitoring itself: said once per process, never raised into the host."""
    if key not in _logged:
        _logged.add(key)
        logger.warning(message, *args)


def attach(app: App, settings: MonitoringSettings) -> None:
    """Exception handlers, the tunnel route and the lifespan tasks on `app` (none in a process that
    has a runtime already)."""
    if runtime.current() is not None:
        logger.debug("reflex-lookout: this process built its own monitoring runtime; the plugin adds none")
        return
    try:
        db_url = get_config().db_url if settings.outbox == "db" else None  # Reflex runs in the app's folder
        engine = runtime.outbox_engine(settings.outbox_url(Path.cwd(), db_url))
        built = runtime.Runtime(settings, OutboxStore(engine))
    except Exception as exc:  # noqa: BLE001 (never breaks its host: the app serves without the monitoring)
        log_once("outbox", "reflex-lookout could not open its outbox (%s); the app serves without monitoring", exc)
        return
    set_handlers(app)
    transformers: Sequence[Any] = (
        [] if app.api_transformer is None
        else list(app.api_transformer) if isinstance(app.api_transformer, Sequence)
        else [app.api_transformer]
    )
    # First in the list is innermost: the app's own routes keep precedence over the tunnel's path.
    app.api_transformer = [built.tunnel.asgi, *transformers]
    if settings.server:
        app.register_lifespan_task(built.run_server_sdk)
    app.register_lifespan_task(built.run_forwarder)
    if settings.shows_dev_overlay:
        from reflex_lookout import dev_backend

        dev_backend.attach(app, settings, built)


def attach_dev_only(app: App, settings: MonitoringSettings) -> None:
    """No DSN, under `reflex run`: the dev overlay alone (dev_backend.py), with the exception handlers
    that report a failed event into its trace."""
    if runtime.current() is not None:
        return
    from reflex_lookout import dev_backend

    set_handlers(app)
    dev_backend.attach(app, settings, None)


def set_handlers(app: App) -> None:
    """Browser errors left to the browser SDK; handler errors reported in their event's trace."""
    if app.frontend_exception_handler is default_frontend_exception_handler:
        app.frontend_exception_handler = frontend_exception_handler
    app.backend_exception_handler = backend_handler(app.backend_exception_handler)


def frontend_exception_handler(exception: Exception) -> None:
    """Reflex sends browser errors to the backend too; the browser SDK has reported them (with frames)."""
    logger.debug("browser error (reported by the browser SDK): %s", exception)


def backend_handler(theirs: Callable[[Exception], Any]) -> Callable[[Exception], Any]:
    """Report the exception in its event's trace (event_errors.py), then answer as the app's own
    handler would; Reflex's default is replaced by the report's toast (it logs at ERROR, which the
    log integration would turn into a second copy of the error)."""

    def backend_exception_handler(exception: Exception) -> EventSpec | list[EventSpec] | None:
        toast = None
        try:
            toast = event_errors.backend_exception_handler(exception)
        except Exception:  # noqa: BLE001 (the monitoring must never break the host's handler)
            log_once("capture", "reflex-lookout could not report an event handler's error; the app goes on")
        return toast if theirs is default_backend_exception_handler else theirs(exception)

    return backend_exception_handler
