"""Browser monitoring of the host app: the configuration and the loader first in every page's
`<head>`, `@sentry/react` after hydration (an app wrap in `root.jsx` that imports the SDK chunk),
React's root error callbacks in `entry.client.js`, and the dev server's proxy of the tunnel path.

`browser_config` is the effective configuration, written once at compile time as JSON into every
page's `<head>`, followed by the loader that parses it (`js/loader.js`: it runs from the first byte,
records what happens until the lazy SDK takes over, and sends what it holds itself if the page goes
away first). Their text comes from `.web/app/lookout_loader.js` (`loader_module`, written by
`Monitoring.pre_compile`) and is rendered on the server only (the prerender, the dev server's SSR):
the browser bundle carries neither string, and `suppressHydrationWarning` keeps the server's text.
The SDK (`js/sdk.js`, written as `.web/app/lookout_sdk.js`) is imported by `root.jsx` only through
`import()`, so that it is a chunk of its own fetched after the page is interactive, or at once when
the loader records an error. Nothing in the JavaScript repeats a value of the settings.

The JavaScript (`js/*.js`) is shipped in the wheel; `js/loader.min.js` is `loader.js` minified by
the pinned esbuild (`make plugin-assets`; a test of Lookout's checks it is current), so a host app
needs no esbuild. Lookout's own pages are built by this module too (its rxconfig.py uses `Monitoring`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import reflex as rx
from reflex_base.utils.imports import ImportDict, ImportVar
from reflex_base.vars import VarData
from reflex_base.vars.base import Var

from reflex_lookout.dsn import Dsn
from reflex_lookout.settings import MonitoringSettings

SENTRY_REACT = "@sentry/react@11.12.0"
JS = Path(__file__).resolve().parent / "js"
INIT_JS = JS / "browser.js"
SDK_JS = JS / "sdk.js"
ENTRY_CLIENT_JS = JS / "entry.client.js"
DEV_START_JS = JS / "dev_start.js"
DEV_OVERLAY_JS = JS / "dev_overlay.js"
DEV_OVERLAY_MODULE = "app/lookout_dev_overlay.js"
FEEDBACK_JS = JS / "feedback.js"
FEEDBACK_MODULE = "app/lookout_feedback.js"
NO_FEEDBACK = ("// Monitoring(feedback=True) puts Sentry's feedback widget here (reflex_lookout/js/feedback.js).\n"
               "export function start() {}\n")
# The dev overlay maps a dev module's frames with its inline source map: Vite's own library, which
# postcss (in every Reflex app) installs anyway. Declared by the browser monitoring in every mode, so that
# the app's package.json is the same in dev and prod (Reflex writes it from the components compiled);
# only the dev overlay imports it, so a production build bundles none of it.
SOURCE_MAP_JS = "source-map-js@^1.2.1"
# What the pages report with under `reflex run` when no DSN is set: the dev overlay's alone (the SDK
# needs a DSN to run; its tunnel is the overlay's route, so nothing is sent anywhere else).
DEV_ONLY_DSN = Dsn.parse("http://reflex_lookout_dev@localhost/1")  # the browser SDK takes \w+ keys, no project 0
LOADER_MIN_JS = JS / "loader.min.js"
SDK_MODULE = "app/lookout_sdk.js"
LOADER_MODULE = "app/lookout_loader.js"
CONFIG_ELEMENT_ID = "lookout-monitoring-config"
CONFIG_NAME = "LOOKOUT_CONFIG_JSON"
LOADER_NAME = "LOOKOUT_LOADER"
# Just outside Reflex's error boundary (55): the configuration stays on a page showing the fallback.
APP_WRAP_KEY = (56, "LookoutMonitoring")
DEV_APP_WRAP_KEY = (57, "LookoutDevOverlay")


# The two head elements together, gzip -9: monitoring adds at most 6 KB before interactive, and this
# is the loader's share (held by a test).
BUDGET_GZIP_BYTES = 3072


def browser_config(settings: MonitoringSettings, dsn: Dsn | None) -> dict[str, Any]:
    """What the browser SDK is initialised with (and what every page carries as JSON), reporting
    as `dsn` (the settings' own, or one a destination gives: Lookout's local inbox). None: no DSN, the
    dev overlay's alone (dev mode). Under `reflex run` the overlay's routes are added (`dev`)."""
    config = _config(settings, dsn or DEV_ONLY_DSN)
    if settings.shows_dev_overlay:
        dev = f"{settings.tunnel_path}/dev"
        config["dev"] = {"intake": f"{dev}/envelope", "events": f"{dev}/events", "clear": f"{dev}/clear",
                         "copy": dsn is not None}
        if dsn is None:
            config["tunnel"] = f"{dev}/envelope"
    return config


def _config(settings: MonitoringSettings, dsn: Dsn) -> dict[str, Any]:
    return {
        "dsn": str(dsn),
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
        "feedback": settings.feedback,
    }


def feedback_module(settings: MonitoringSettings) -> str:
    """The text of `.web/app/lookout_feedback.js`, which the SDK chunk imports: the widget's module
    (js/feedback.js) when it is on, else one that does nothing, so that the chunk bundles none of it."""
    if settings.feedback:
        return FEEDBACK_JS.read_text()
    return NO_FEEDBACK


def config_json(settings: MonitoringSettings, dsn: Dsn | None) -> str:
    """The configuration as JSON that is safe inside a `<script>` element (no `<`, `>`, `&`)."""
    text = json.dumps(browser_config(settings, dsn), separators=(",", ":"), sort_keys=True)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escape)
    return text


def loader_code() -> str:
    """`js/loader.js` minified (`js/loader.min.js`), checked to be unable to end its `<script>` element."""
    if not LOADER_MIN_JS.exists():
        raise RuntimeError(f"reflex-lookout is incomplete: {LOADER_MIN_JS} is missing (the wheel ships it).")
    code = LOADER_MIN_JS.read_text().strip()
    if "<script" in code.lower() or "</script" in code.lower():
        raise RuntimeError(f"{LOADER_MIN_JS} holds '<script' or '</script', which would end its element.")
    return code


def loader_module(settings: MonitoringSettings, dsn: Dsn | None) -> str:
    """The text of `.web/app/lookout_loader.js`: the configuration and the minified loader, as strings."""
    return (
        f"export const {CONFIG_NAME} = {json.dumps(config_json(settings, dsn))};\n"
        f"export const {LOADER_NAME} = {json.dumps(loader_code())};\n"
    )


def _server_only(name: str) -> Var:
    """The module's string in the server render; "" in the browser bundle (Vite replaces
    `import.meta.env.SSR` with false there, and the bundler drops the import)."""
    return Var(
        f'(import.meta.env.SSR ? {name} : "")',
        _var_data=VarData(imports={f"$/{LOADER_MODULE}": [ImportVar(tag=name)]}),
    )


def head_components() -> list[rx.Component]:
    """The configuration element, then the loader, for the front of `App.head_components`."""
    keep = {"suppressHydrationWarning": True}
    return [
        rx.el.script(_server_only(CONFIG_NAME), type="application/json", id=CONFIG_ELEMENT_ID, custom_attrs=keep),
        rx.el.script(_server_only(LOADER_NAME), custom_attrs=keep),
    ]


class BrowserMonitoring(rx.Component):
    """The app wrap that loads the SDK after interactive; its React component is defined by
    `browser.js`. Nothing of Sentry's is imported by root.jsx: the npm package is only installed
    (`lib_dependencies`; `Plugin.get_frontend_dependencies` would bundle it as a namespace import)."""

    tag = "LookoutMonitoring"
    lib_dependencies: list[str] = [SENTRY_REACT, SOURCE_MAP_JS]

    def add_imports(self) -> ImportDict:
        return {
            "react": [ImportVar(tag="useEffect"), ImportVar(tag="useRef"), ImportVar(tag="Fragment")],
            "react-router": [ImportVar(tag="useNavigation"), ImportVar(tag="useLocation"), ImportVar(tag="useMatches")],
            "@emotion/react": [ImportVar(tag="jsx")],
        }

    def add_custom_code(self) -> list[str]:
        return [INIT_JS.read_text()]


class DevOverlay(rx.Component):
    """The dev overlay's app wrap (dev mode only): its React component is defined by `dev_start.js`,
    which imports the overlay (`js/dev_overlay.js`, written as DEV_OVERLAY_MODULE) after hydration."""

    tag = "LookoutDevOverlay"

    def add_imports(self) -> ImportDict:
        return {"react": [ImportVar(tag="useEffect")]}

    def add_custom_code(self) -> list[str]:
        return [DEV_START_JS.read_text()]


# vite.config.js: Reflex writes it once and re-edits it on every compile, so each edit sits between
# markers and replaces its own earlier version (idempotent).
SERVER_ANCHOR = "  server: {\n"
BASE_ANCHOR = re.compile(r"^  base: .*\n", re.MULTILINE)


def _block(name: str, indent: str, body: str) -> str:
    return f"{indent}// lookout-{name}\n{indent}{body}\n{indent}// end lookout-{name}\n"


def _without(name: str, config_js: str) -> str:
    return re.sub(rf" *// lookout-{name}\n.*?\n *// end lookout-{name}\n", "", config_js, flags=re.DOTALL)


def add_proxy(config_js: str, paths: Sequence[str], backend_url: str) -> str:
    """`vite.config.js` with exactly one proxy block, for `paths`: in dev the page's origin is Vite's
    (:3000), the tunnel is the backend's (:8000)."""
    without = _without("tunnel-proxy", config_js)
    if SERVER_ANCHOR not in without:
        raise RuntimeError("vite.config.js has no `server: {` block; Reflex changed its template.")
    # xfwd: the backend sees X-Forwarded-For, so a client elsewhere is not taken for this machine.
    entry = json.dumps({path: {"target": backend_url, "changeOrigin": False, "xfwd": True} for path in paths})
    return without.replace(SERVER_ANCHOR, SERVER_ANCHOR + _block("tunnel-proxy", "    ", f"proxy: {entry},"), 1)


def add_sentry_flags(config_js: str, debug: bool) -> str:
    """`vite.config.js` whose `define` sets Sentry's `__SENTRY_DEBUG__` build flag (once)."""
    without = _without("sentry-flags", config_js)
    anchor = BASE_ANCHOR.search(without)
    if anchor is None:
        raise RuntimeError("vite.config.js has no top-level `base:` entry; Reflex changed its template.")
    define = json.dumps({"__SENTRY_DEBUG__": json.dumps(debug)})
    return without[: anchor.end()] + _block("sentry-flags", "  ", f"define: {define},") + without[anchor.end():]
