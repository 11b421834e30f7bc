"""A Reflex plugin that puts the tunnel on the page's origin in dev mode too.

In dev, Vite serves the page on :3000 and the backend runs on :8000; the generated
`vite.config.js` has no proxy, so `POST /monitoring` from the page would hit Vite. This plugin
adds a proxy entry for the tunnel path to the backend. Reflex writes the file once and re-edits it
on every compile, so the edit replaces its own earlier version (idempotent). In prod the page and
the backend share one port and the proxy is unused.
"""

from __future__ import annotations

import json
import re

from reflex_base.constants import ReactRouter
from reflex_base.plugins.base import Plugin, PreCompileContext
from typing_extensions import Unpack

from app.monitoring.settings import SETTINGS

ANCHOR = "  server: {\n"
MARKER = re.compile(r"    // lookout-tunnel-proxy\n.*?\n    // end lookout-tunnel-proxy\n", re.DOTALL)


def proxy_block(path: str, backend_url: str) -> str:
    entry = json.dumps({path: {"target": backend_url, "changeOrigin": False}})
    return f"    // lookout-tunnel-proxy\n    proxy: {entry},\n    // end lookout-tunnel-proxy\n"


def add_proxy(config_js: str, path: str, backend_url: str) -> str:
    """`vite.config.js` with exactly one proxy block for `path` (replacing an earlier one)."""
    without = MARKER.sub("", config_js)
    if ANCHOR not in without:
        raise RuntimeError("vite.config.js has no `server: {` block; Reflex changed its template.")
    return without.replace(ANCHOR, ANCHOR + proxy_block(path, backend_url), 1)


class TunnelProxyPlugin(Plugin):
    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        from reflex_base.config import get_config

        backend = get_config().api_url.rstrip("/")
        context["add_modify_task"](
            ReactRouter.VITE_CONFIG_FILE, lambda text: add_proxy(text, SETTINGS.tunnel_path, backend)
        )
