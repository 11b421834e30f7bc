"""The backend side, attached to the host's `rx.App` from `Monitoring.post_compile`.

Reflex 0.10.1 calls every plugin's `post_compile(app=...)` in `App.__call__` (reflex/app.py:826), in
each backend process, after compiling and before it reads `api_transformer` (:836) and builds the
lifespan (:860) whose first task reads `backend_exception_handler` into the event processor (:771).
So a plugin can still add a route, a lifespan task and the exception handlers there: no second line
in the app module is needed.

PROTOTYPE (issue #27), labelled as such in docs/design/reflex-plugin.md:
- the tunnel is a pass-through (`PassThroughTunnel`): no origin check, no rate limits, no outbox; a
  report is lost when upstream is down. Lookout's tunnel + outbox + forwarder replace it;
- sentry-sdk uses its own HTTP transport, straight to the DSN, not the outbox;
- the backend handler reports with `capture_exception`, outside the event's trace (event_tracing
  and event_errors move here next).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx
import reflex as rx
import sentry_sdk
from reflex.app import App, default_backend_exception_handler, default_frontend_exception_handler
from reflex_base.config import get_config
from reflex_base.event import EventSpec
from sentry_sdk.integrations.logging import LoggingIntegration, ignore_logger, ignore_logger_for_sentry_logs
from sentry_sdk.integrations.starlette import StarletteIntegration
from starlette.types import ASGIApp, Receive, Scope, Send

from reflex_lookout.settings import MonitoringSettings

# The plugin's own records never become Sentry events, logs or breadcrumbs: reporting the tunnel's
# trouble through the same tunnel would feed on itself, and a handler's traceback is already an event.
logger = logging.getLogger("reflex_lookout")
ignore_logger("reflex_lookout*")  # sentry-sdk matches these names with fnmatch
ignore_logger_for_sentry_logs("reflex_lookout*")
TOAST_ID = "lookout-backend-error"
MAX_BODY = 1024 * 1024  # prototype cap; Lookout's tunnel takes 20 MiB as received, 100 MiB decoded
_logged: set[str] = set()


def log_once(key: str, message: str, *args: object) -> None:
    """A failure of the monitoring itself: said once per process, never raised into the host."""
    if key not in _logged:
        _logged.add(key)
        logger.warning(message, *args)


def attach(app: App, settings: MonitoringSettings) -> None:
    """Exception handlers, the tunnel route and the server SDK's lifespan task, on `app`."""
    if app.frontend_exception_handler is default_frontend_exception_handler:
        app.frontend_exception_handler = frontend_exception_handler
    app.backend_exception_handler = backend_handler(app.backend_exception_handler)
    transformers: Sequence[Any] = (
        [] if app.api_transformer is None
        else list(app.api_transformer) if isinstance(app.api_transformer, Sequence)
        else [app.api_transformer]
    )
    # First in the list is innermost: the app's own routes keep precedence over the tunnel's path.
    app.api_transformer = [PassThroughTunnel(settings).wrap, *transformers]
    if settings.server:
        app.register_lifespan_task(server_sdk(settings))


def frontend_exception_handler(exception: Exception) -> None:
    """Reflex sends browser errors to the backend too; the browser SDK has reported them (with frames)."""
    logger.debug("browser error (reported by the browser SDK): %s", exception)


def backend_handler(theirs: Callable[[Exception], Any]) -> Callable[[Exception], Any]:
    """Report the exception, then answer as the app's own handler would (Reflex's default: a toast
    with a reference instead of its generic one)."""

    def backend_exception_handler(exception: Exception) -> EventSpec | list[EventSpec] | None:
        event_id = None
        try:
            event_id = sentry_sdk.capture_exception(exception)
        except Exception:  # noqa: BLE001 (the monitoring must never break the host's handler)
            log_once("capture", "reflex-lookout could not report an event handler's error; the app goes on")
        if theirs is not default_backend_exception_handler:
            return theirs(exception)
        logger.error("event handler failed (reported as %s)", event_id, exc_info=exception)
        reference = f" Reference: {event_id[:8]}." if event_id else ""
        return rx.toast.error("Something went wrong on our side.", id=TOAST_ID, position="top-center",
                              description=f"The action did not complete; it has been reported.{reference}")

    return backend_exception_handler


def server_sdk(settings: MonitoringSettings) -> Callable[[], contextlib.AbstractAsyncContextManager[None]]:
    @contextlib.asynccontextmanager
    async def lookout_server_sdk() -> AsyncIterator[None]:
        """Lifespan task: sentry-sdk for this process, from the plugin's settings."""
        try:
            if sentry_sdk.get_client().is_active():
                log_once("twice", "reflex-lookout: the app started sentry-sdk itself; it is left as the app set it up")
            else:
                sentry_sdk.init(
                    dsn=str(settings.dsn), environment=settings.environment, release=settings.release,
                    traces_sample_rate=settings.traces_sample_rate, enable_logs=settings.enable_logs,
                    max_breadcrumbs=settings.max_breadcrumbs, transport_queue_size=settings.transport_buffer_size,
                    send_default_pii=False, include_local_variables=False,
                    integrations=[LoggingIntegration(level=settings.log_level, event_level=logging.ERROR,
                                                     sentry_logs_level=settings.log_level)],
                    # A transaction per static file and per websocket would be noise: the backend's
                    # work is Reflex events (their transactions come with event_tracing, not moved yet).
                    disabled_integrations=[StarletteIntegration()],
                )
                # The app's loggers (its package, named after app_name) pass records from log_level;
                # unconfigured, Python's loggers pass WARNING and above only.
                logging.getLogger(get_config().app_name).setLevel(settings.log_level)
        except Exception as exc:  # noqa: BLE001 (never breaks its host: the app serves without it)
            log_once("sdk", "reflex-lookout could not start sentry-sdk (%s); the app serves without server reporting", exc)
        yield
        with contextlib.suppress(Exception):
            sentry_sdk.flush(2.0)

    return lookout_server_sdk


class PassThroughTunnel:
    """PROTOTYPE: `POST {tunnel_path}` forwarded to the DSN's ingest endpoint, nothing kept."""

    def __init__(self, settings: MonitoringSettings) -> None:
        self.settings = settings
        self.client: httpx.AsyncClient | None = None

    def wrap(self, inner: ASGIApp) -> ASGIApp:
        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] != "http" or scope["path"] != self.settings.tunnel_path:
                return await inner(scope, receive, send)
            await self.handle(scope, receive, send)

        return app

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            return await _answer(send, 405, {"detail": "The tunnel takes POST only."})
        body = bytearray()
        while True:
            message = await receive()
            body += message.get("body", b"")
            if len(body) > MAX_BODY:
                return await _answer(send, 413, {"detail": "The envelope is too large."})
            if not message.get("more_body"):
                break
        try:
            header = json.loads(bytes(body).split(b"\n", 1)[0])
        except ValueError:
            return await _answer(send, 400, {"detail": "The envelope's header line is not JSON."})
        if not isinstance(header, dict) or header.get("dsn") != str(self.settings.dsn):
            return await _answer(send, 403, {"detail": "The envelope names another DSN."})
        try:
            self.client = self.client or httpx.AsyncClient(timeout=10.0, follow_redirects=False)
            upstream = await self.client.post(
                self.settings.dsn.envelope_url if self.settings.dsn else "", content=bytes(body),
                headers={"Content-Type": "application/x-sentry-envelope"},
            )
        except httpx.HTTPError as exc:
            log_once("forward", "reflex-lookout could not reach %s (%s); reports are lost while it is away (prototype)",
                     self.settings.dsn.netloc if self.settings.dsn else "?", exc)
            return await _answer(send, 503, {"detail": "Upstream is unreachable."})
        await _answer(send, upstream.status_code, upstream.content, upstream.headers.get("content-type", "application/json"))


async def _answer(send: Send, status: int, body: dict[str, str] | bytes, content_type: str = "application/json") -> None:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(data)).encode())]})
    await send({"type": "http.response.body", "body": data})
