"""sentry-sdk in the backend process: started once, before it serves, from the same settings as
the browser SDK (same DSN or local DSN, environment, release, sample rate, breadcrumbs, buffer).

- Transport: `OutboxTransport`, into the same outbox as the tunnel (durable; the inbox in local mode).
- Tracing: every Reflex event is a transaction continuing the browser's trace (`event_tracing`);
  sentry-sdk's SQLAlchemy and httpx integrations add the SQL and HTTP spans.
- Errors in event handlers: `event_errors.backend_exception_handler`.
- Logging: records at `log_level` and above become Sentry logs and breadcrumbs; ERROR and above
  also error events (sentry-sdk's default). The app's loggers pass records from `log_level`;
  libraries keep Python's default (WARNING), and a library's record is a Sentry log only at ERROR
  and above (`app_logs_only`: Reflex's routine warnings are not the app's logs). Breadcrumbs are
  kept only inside a Reflex event's scope (event_tracing.keep_breadcrumb). The pipeline's own loggers are left out: reporting
  the tunnel's or forwarder's trouble through the same tunnel and forwarder would feed on itself.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import sentry_sdk
from sentry_sdk.integrations import DidNotEnable, Integration
from sentry_sdk.integrations.logging import LoggingIntegration, ignore_logger, ignore_logger_for_sentry_logs
from sentry_sdk.integrations.starlette import StarletteIntegration
from sentry_sdk.utils import logger as sentry_logger

from reflex_lookout import event_errors, event_tracing
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.server_transport import OutboxTransport
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.settings_error import SettingsError

if TYPE_CHECKING:
    from sentry_sdk.transport import Transport

    from reflex_lookout.dev_inbox import DevInbox

# Loggers whose records never become Sentry events, logs or breadcrumbs: the reporting pipeline
# itself (reporting the tunnel's or forwarder's trouble through them would feed on itself) and the
# servers' access logs (one record per request, the tunnel's posts included). A host adds its own
# (`start(quiet=...)`). Not event_errors: its line about a failed handler stays a Sentry log, as before.
QUIET_LOGGERS = (
    "reflex_lookout", "reflex_lookout.runtime", "reflex_lookout.tunnel", "reflex_lookout.forwarder",
    "reflex_lookout.outbox", "reflex_lookout.server", "reflex_lookout.server_transport", "reflex_lookout.background",
    "reflex_lookout.spotlight",
    "granian.access", "uvicorn.access",
)

logger = logging.getLogger(__name__)

# The route Reflex reports for a page it does not know (router_data "pathname" of an event there).
NOT_FOUND_ROUTE = "/404"


def app_logger_name() -> str:
    """The parent of the app's own loggers: its package, named after `app_name` in rxconfig.py."""
    from reflex_base.config import get_config

    return get_config().app_name


def server_options(settings: MonitoringSettings, app_logger: str | None = None) -> dict[str, Any]:
    """What sentry-sdk is initialised with (the transport is added by `start`). `app_logger`: the
    parent of the app's loggers (default: its `app_name`), whose records are the Sentry logs."""
    return {
        # None: the dev overlay's alone (no DSN under `reflex run`: dev_transport.py keeps what is captured).
        "dsn": str(settings.reporting_dsn) if settings.dsn is not None or _has_reporting_dsn(settings) else None,
        "environment": settings.environment,
        "release": settings.release,
        "traces_sample_rate": settings.traces_sample_rate,
        "enable_logs": settings.enable_logs,  # 2.x spelling since 2.35 (before: _experiments)
        "debug": settings.debug,
        "max_breadcrumbs": settings.max_breadcrumbs,
        "transport_queue_size": settings.transport_buffer_size,
        "spotlight": False,  # sentry-sdk's own: DSN-less it turns on PII and samples all; SpotlightRelay posts instead
        "send_default_pii": False,
        # Frame locals would carry the Reflex session token and whole state objects.
        "include_local_variables": False,
        "integrations": [LoggingIntegration(
            level=settings.log_level, event_level=logging.ERROR, sentry_logs_level=settings.log_level,
        )],
        # The backend's requests are Reflex events (transactions of their own, see event_tracing);
        # per-HTTP-request transactions would add one per static file and one per websocket.
        # aiohttp is only the forwarder's HTTP client here (under httpx, which is instrumented).
        "disabled_integrations": _disabled_integrations(),
        "before_send_transaction": drop_not_found,
        "before_breadcrumb": event_tracing.keep_breadcrumb,
        "before_send_log": functools.partial(app_logs_only, app_logger=app_logger or app_logger_name()),
    }


def _has_reporting_dsn(settings: MonitoringSettings) -> bool:
    """Whether the settings answer a DSN to report with (Lookout's answer its local inbox's)."""
    try:
        return settings.reporting_dsn is not None
    except SettingsError:
        return False


def _disabled_integrations() -> list[Integration]:
    """Starlette's always; aiohttp's where it is installed (Lookout's forwarder transport, the extra [fast])."""
    disabled: list[Integration] = [StarletteIntegration()]
    try:
        from sentry_sdk.integrations.aiohttp import AioHttpIntegration
    except DidNotEnable:  # aiohttp is not installed: nothing to leave out
        return disabled
    return [*disabled, AioHttpIntegration()]


def drop_not_found(event: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any] | None:
    """Events handled while the page is the not-found route are not worth a transaction (the
    browser drops that route's transactions too)."""
    return None if (event.get("tags") or {}).get("reflex.route") == NOT_FOUND_ROUTE else event


def app_logs_only(log: dict[str, Any], hint: dict[str, Any], app_logger: str) -> dict[str, Any] | None:
    """sentry-sdk's `before_send_log`: Sentry logs are the app's own records; a library's (Reflex's
    routine warnings, granian's, alembic's) is one only at ERROR and above (it is also an error event)."""
    attributes = log.get("attributes") or {}
    name = str(attributes.get("logger.name", ""))
    if name == app_logger or name.startswith(app_logger + ".") or not name:
        return log
    return log if str(log.get("severity_text", "")) in ("error", "fatal") else None


def configure_logging(settings: MonitoringSettings, app_logger: str | None = None, quiet: Sequence[str] = ()) -> None:
    """Leave the pipeline's loggers (and `quiet`) out of Sentry, and let the app's own records through."""
    for name in (*QUIET_LOGGERS, *quiet):
        ignore_logger(name)
        ignore_logger_for_sentry_logs(name)
    # Python's loggers pass WARNING and above unless configured: the app's own pass from
    # `log_level` (libraries keep theirs: httpx alone logs every request at INFO).
    logging.getLogger(app_logger or app_logger_name()).setLevel(settings.log_level)
    # sentry-sdk's own logger passes nothing unless `debug` is on (its filter drops every record), yet
    # builds a record for each of its debug lines first, several per transaction: ~3 % of a backend's
    # CPU under a stream of events. Without `debug`, records below ERROR are not made at all.
    sentry_logger.setLevel(logging.DEBUG if settings.debug else logging.ERROR)


_started = False


def start(settings: MonitoringSettings, store: OutboxStore | None, on_commit: Callable[[str], None],
          quiet: Sequence[str] = (), prepare: Callable[[str, bytes], bytes] | None = None,
          dev: DevInbox | None = None, dev_relay: Callable[[bytes], None] | None = None) -> Transport | None:
    """Initialise sentry-sdk for this process (once; a second call does nothing; nor does a call in
    a process whose app started sentry-sdk itself: it is left as the app set it up). Its envelopes
    go to the outbox (`store`), and under `reflex run` to the dev overlay (`dev`) too; without a
    store, to the overlay alone."""
    global _started
    if _started or not settings.server:
        return None
    _started = True
    if sentry_sdk.get_client().is_active():
        logger.warning("reflex-lookout: the app started sentry-sdk itself; it is left as the app set it up")
        return None
    app_logger = app_logger_name()
    options = server_options(settings, app_logger)
    transport: Transport | None = None
    if store is not None:
        transport = OutboxTransport(
            options, store, local=settings.dsn is None, max_bytes=settings.outbox_max_bytes, on_commit=on_commit,
            prepare=prepare,
        )
    if dev is not None:
        from reflex_lookout.dev_transport import DevTransport

        transport = DevTransport(options, dev, transport, relay=dev_relay)
    if transport is None:
        return None
    sentry_sdk.init(transport=transport, **options)
    configure_logging(settings, app_logger, quiet)
    if settings.release is None:
        # sentry-sdk would guess one (the git commit); the browser has none: keep them the same.
        sentry_sdk.get_client().options["release"] = None
    event_errors.processor = event_tracing.enable()
    return transport
