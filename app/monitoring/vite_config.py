"""A Reflex plugin that edits the generated `vite.config.js` for browser monitoring.

- **Backend proxy** (dev): Vite serves the page on :3000 and the backend runs on :8000; the
  generated config has no proxy, so `POST /monitoring` from the page would hit Vite. Proxy entries
  send the tunnel path and `/api/` (the inbox's endpoints) to the backend. In prod the page and the backend share one port and the
  proxy is unused.
- **Sentry's build flag** `__SENTRY_DEBUG__`, from the `debug` setting: with debug off (the
  default) the bundler drops the SDK's debug logging code from the page.
- Hidden source maps (`build.sourcemap: "hidden"`) are the build step's own edit
  (reflex_lookout/sourcemaps/build_step.py, `hide_source_maps`).

Reflex writes the file once and re-edits it on every compile, so each edit sits between markers
and replaces its own earlier version (idempotent).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from reflex_base.constants import ReactRouter
from reflex_base.plugins.base import Plugin, PreCompileContext
from typing_extensions import Unpack

from app.settings import SETTINGS

SERVER_ANCHOR = "  server: {\n"
# What the page reaches on its own origin that the backend serves: the tunnel, and the inbox's
# ingest endpoints, JSON API and sign-in routes (all under /api/).
DEV_PROXIED = (SETTINGS.tunnel_path, "/api/")
BASE_ANCHOR = re.compile(r"^  base: .*\n", re.MULTILINE)


def _block(name: str, indent: str, body: str) -> str:
    return f"{indent}// lookout-{name}\n{indent}{body}\n{indent}// end lookout-{name}\n"


def _without(name: str, config_js: str) -> str:
    return re.sub(rf" *// lookout-{name}\n.*?\n *// end lookout-{name}\n", "", config_js, flags=re.DOTALL)


def add_proxy(config_js: str, paths: Sequence[str], backend_url: str) -> str:
    """`vite.config.js` with exactly one proxy block, for `paths` (replacing an earlier one)."""
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


class ViteConfigPlugin(Plugin):
    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        from reflex_base.config import get_config

        backend = get_config().api_url.rstrip("/")
        context["add_modify_task"](
            ReactRouter.VITE_CONFIG_FILE,
            lambda text: add_sentry_flags(add_proxy(text, DEV_PROXIED, backend), SETTINGS.debug),
        )
