"""The browser SDK: `@sentry/react`, configured from the settings and started before hydration.

`browser_config` is the effective configuration: `BrowserMonitoring` (an app wrap) writes it into
`root.jsx` once (in local mode with the DSN key kept in the database: `compiled_settings`), where `browser.js` initialises the SDK with it and renders the same JSON into every
page (`<script type="application/json" id="lookout-monitoring-config">`). `BrowserMonitoringPlugin`
replaces Reflex's `entry.client.js` with `entry.client.js` here, which adds React's root error
callbacks. Nothing in the JavaScript repeats a value of the settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import reflex as rx
from reflex_base.plugins.base import Plugin, PreCompileContext
from reflex_base.utils.imports import ImportVar
from typing_extensions import Unpack

from app.monitoring import loader
from app.monitoring.settings import SETTINGS, Settings

SENTRY_REACT = "@sentry/react@11.12.0"
HERE = Path(__file__).resolve().parent
INIT_JS = HERE / "browser.js"
ENTRY_CLIENT_JS = HERE / "entry.client.js"
# Tracing, re-exported alone so that the bundler gives it a chunk of its own (loaded after start-up
# by browser.js) holding only what it needs. Nothing of Sentry's tracing module may be imported by
# root.jsx itself, or the whole module would load with it.
TRACING_MODULE = "app/lookout_tracing.js"
TRACING_JS = (
    "export { browserTracingIntegration, startBrowserTracingNavigationSpan, startInactiveSpan, getTraceData }"
    ' from "@sentry/react";\n'
)
CONFIG_ELEMENT_ID = "lookout-monitoring-config"
# Named imports only: a namespace import defeats tree-shaking (REFLEX-NOTES: 86 KB → 238 KB gzip).
SENTRY_NAMES = (
    "init", "defaultStackParser", "captureException", "captureMessage",
    "logger", "lastEventId", "flush", "getClient", "getActiveSpan", "getRootSpan", "spanToJSON",
    "reactErrorHandler",
)


def browser_config(settings: Settings) -> dict[str, Any]:
    """What the browser SDK is initialised with (and what every page shows as JSON)."""
    return {
        "dsn": str(settings.reporting_dsn),
        "tunnel": settings.tunnel_path,
        "environment": settings.environment,
        "release": settings.release,
        "tracesSampleRate": settings.traces_sample_rate,
        "enableLogs": settings.enable_logs,
        "debug": settings.debug,
        "maxBreadcrumbs": settings.max_breadcrumbs,
        "transportBufferSize": settings.transport_buffer_size,
        "maxStackFrames": settings.max_stack_frames,
        "maxStackLineLength": settings.max_stack_line_length,
        "idleTimeoutMs": settings.idle_span_timeout_ms,
        "finalTimeoutMs": settings.final_span_timeout_ms,
        "childSpanTimeoutMs": settings.child_span_timeout_ms,
        "routeLoadTimeoutMs": settings.route_load_timeout_ms,
        "ignoreErrors": list(settings.ignored_errors),
        "notFoundRouteId": settings.not_found_route_id,
    }


def config_json(settings: Settings) -> str:
    """The configuration as JSON that is safe inside a `<script>` element (no `<`, `>`, `&`)."""
    text = json.dumps(browser_config(settings), separators=(",", ":"), sort_keys=True)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def init_code(settings: Settings) -> str:
    """Module-scope code for `root.jsx`: the configuration, then `browser.js`."""
    return (
        f"const LOOKOUT_MONITORING_JSON = {json.dumps(config_json(settings))};\n"
        "const LOOKOUT_MONITORING = JSON.parse(LOOKOUT_MONITORING_JSON);\n"
        f"const LOOKOUT_CONFIG_ELEMENT_ID = {json.dumps(CONFIG_ELEMENT_ID)};\n" + INIT_JS.read_text()
    )


class BrowserMonitoring(rx.Component):
    """The app wrap that starts the SDK; its React component is defined by `browser.js`."""

    tag = "LookoutMonitoring"

    def add_imports(self) -> dict[str, list[ImportVar]]:
        return {
            SENTRY_REACT: [ImportVar(tag=name, alias=f"Sentry_{name}") for name in SENTRY_NAMES],
            "react": [ImportVar(tag="useEffect"), ImportVar(tag="useRef"), ImportVar(tag="Fragment")],
            "react-router": [ImportVar(tag="useNavigation"), ImportVar(tag="useLocation"), ImportVar(tag="useMatches")],
            "@emotion/react": [ImportVar(tag="jsx")],
        }

    def add_custom_code(self) -> list[str]:
        return [init_code(compiled_settings())]


def compiled_settings() -> Settings:
    """SETTINGS for the page being built: in local mode with the install's DSN key, read from the
    database (the build runs where the backend does, on its database; migrated first, since the
    backend may not have started on it yet)."""
    if SETTINGS.dsn is None and SETTINGS.local_dsn is None:
        from app import db  # here, not at the top: rxconfig.py imports this module
        from app.inbox.projects import settle_local_dsn

        engine = db.engine()
        db.migrate(engine)
        settle_local_dsn(SETTINGS, engine)
    return SETTINGS


def head_components() -> list[rx.Component]:
    """The configuration element and the loader, first in every page's `<head>` (`app/monitoring/loader.py`)."""
    return loader.head_components(SETTINGS, CONFIG_ELEMENT_ID)


def app_wrap(_stateful: bool) -> rx.Component | None:
    return BrowserMonitoring.create() if SETTINGS.browser_monitoring else None


# Just outside Reflex's error boundary (55): the configuration stays on a page showing the fallback.
APP_WRAP_KEY = (56, "LookoutMonitoring")


class BrowserMonitoringPlugin(Plugin):
    """Writes `.web/app/entry.client.js` (instead of Reflex's own) with React's error callbacks, and
    `.web/app/lookout_tracing.js`, the tracing chunk, and `.web/app/lookout_loader.js`, the head's
    configuration and loader (`loader.loader_module`)."""

    def provides_entry_client(self) -> bool:
        return SETTINGS.browser_monitoring

    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        if not SETTINGS.browser_monitoring:
            return
        from reflex_base import constants
        from reflex.utils.prerequisites import get_web_dir

        web = get_web_dir()
        context["add_save_task"](lambda: [
            (str(web / constants.Embed.ENTRY_PATH), ENTRY_CLIENT_JS.read_text()),
            (str(web / TRACING_MODULE), TRACING_JS),
            (str(web / loader.LOADER_MODULE), loader.loader_module(config_json(compiled_settings()))),
        ])
