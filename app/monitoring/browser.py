"""Browser monitoring: a loader before hydration, `@sentry/react` after (issue #16).

`browser_config` is the effective configuration, written once at compile time (in local mode with the
DSN key kept in the database: `compiled_settings`) as JSON into every page's `<head>`, followed by the
loader that parses it (`loader.py`). The SDK (`sdk.js`, written as `.web/app/lookout_sdk.js`) is
imported by `root.jsx` only through `import()`, so that it is a chunk of its own fetched after the
page is interactive, or at once when the loader records an error. `BrowserMonitoring` (an app wrap)
puts `browser.js` into `root.jsx`: the import, the handshake with the loader and the component that
follows React Router's navigations. `BrowserMonitoringPlugin` replaces Reflex's `entry.client.js` with
`entry.client.js` here, which adds React's root error callbacks. Nothing in the JavaScript repeats a
value of the settings.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import reflex as rx
from reflex_base.plugins.base import Plugin, PreCompileContext
from reflex_base.utils.imports import ImportDict, ImportVar
from typing_extensions import Unpack

from app.monitoring import loader
from app.settings import SETTINGS, Settings

SENTRY_REACT = "@sentry/react@11.12.0"
# The JavaScript lives in the plugin package (issue #27: one copy, which the wheel ships); until
# app/ imports reflex_lookout, it is read from the source tree.
JS = Path(__file__).resolve().parent.parent.parent / "plugin" / "src" / "reflex_lookout" / "js"
INIT_JS = JS / "browser.js"
ENTRY_CLIENT_JS = JS / "entry.client.js"
# The SDK chunk, imported by root.jsx through import() only (browser.js).
SDK_JS = JS / "sdk.js"
SDK_MODULE = "app/lookout_sdk.js"
CONFIG_ELEMENT_ID = "lookout-monitoring-config"


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
        "loaderEnvelopeMaxBytes": settings.loader_envelope_max_bytes,
        "ignoreErrors": list(settings.ignored_errors),
        "notFoundRouteId": settings.not_found_route_id,
    }


def config_json(settings: Settings) -> str:
    """The configuration as JSON that is safe inside a `<script>` element (no `<`, `>`, `&`)."""
    text = json.dumps(browser_config(settings), separators=(",", ":"), sort_keys=True)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


class BrowserMonitoring(rx.Component):
    """The app wrap that loads the SDK after interactive; its React component is defined by
    `browser.js`. Nothing of Sentry's is imported by root.jsx: the npm package is only installed
    (`lib_dependencies`; `Plugin.get_frontend_dependencies` would bundle it as a namespace import)."""

    tag = "LookoutMonitoring"
    lib_dependencies: list[str] = [SENTRY_REACT]

    def add_imports(self) -> ImportDict:
        return {
            "react": [ImportVar(tag="useEffect"), ImportVar(tag="useRef"), ImportVar(tag="Fragment")],
            "react-router": [ImportVar(tag="useNavigation"), ImportVar(tag="useLocation"), ImportVar(tag="useMatches")],
            "@emotion/react": [ImportVar(tag="jsx")],
        }

    def add_custom_code(self) -> list[str]:
        return [INIT_JS.read_text()]


def compiled_settings() -> Settings:
    """SETTINGS for the page being built: in local mode with the install's DSN key, read from the
    database (the build runs where the backend does, on its database; migrated first, since the
    backend may not have started on it yet)."""
    if SETTINGS.dsn is None and SETTINGS.local_dsn is None:
        from app import db  # here, not at the top: rxconfig.py imports this module
        from app.inbox.projects import settle_local_dsn

        engine = db.migrated_engine()
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
    """Writes `.web/app/entry.client.js` (instead of Reflex's own) with React's error callbacks,
    `.web/app/lookout_sdk.js`, the SDK chunk, and `.web/app/lookout_loader.js`, the head's
    configuration and loader (`loader.loader_module`)."""

    def provides_entry_client(self) -> bool:
        return SETTINGS.browser_monitoring

    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        if not SETTINGS.browser_monitoring:
            return
        from reflex.utils.prerequisites import get_web_dir
        from reflex_base import constants

        web = get_web_dir()
        context["add_save_task"](lambda: [
            (str(web / constants.Embed.ENTRY_PATH), ENTRY_CLIENT_JS.read_text()),
            (str(web / SDK_MODULE), SDK_JS.read_text()),
            (str(web / loader.LOADER_MODULE), loader.loader_module(config_json(compiled_settings()))),
        ])
