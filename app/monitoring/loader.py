"""The loader: `loader.js`, minified, inline in every page's `<head>` before the app's modules.

It runs from the first byte, records what happens until the lazy SDK takes over, and sends what it
holds itself if the page goes away first (issue #16; design in `loader.js`'s header). Two elements
go into the head (`head_components`), in this order: the configuration as JSON
(`<script type="application/json" id="lookout-monitoring-config">`, the same `config_json` as the
SDK's), then the loader, which parses it. Nothing in the loader repeats a value of the settings.

Their text comes from `.web/app/lookout_loader.js` (`loader_module`, written at compile time by
`BrowserMonitoringPlugin`) and is rendered on the server only (the prerender, the dev server's SSR):
the browser bundle carries neither string, and `suppressHydrationWarning` keeps the server's text.
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path

import reflex as rx
from reflex_base.utils.imports import ImportVar
from reflex_base.vars import VarData
from reflex_base.vars.base import Var

from app.settings import Settings

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# In the plugin package (issue #27: one copy); read from the source tree until app/ imports reflex_lookout.
LOADER_JS = ROOT / "plugin" / "src" / "reflex_lookout" / "js" / "loader.js"
# Pinned in the Makefile (NPM_TOOLS), installed by `make setup` like bun, which rxconfig.py requires.
ESBUILD = ROOT / ".tools" / "node_modules" / ".bin" / "esbuild"
LOADER_MODULE = "app/lookout_loader.js"
CONFIG_NAME = "LOOKOUT_CONFIG_JSON"
LOADER_NAME = "LOOKOUT_LOADER"
# The two head elements together, gzip -9 (issue #16: monitoring adds at most 6 KB before interactive;
# this is the loader's share, held by a unit test).
BUDGET_GZIP_BYTES = 3072


class LoaderError(RuntimeError):
    """The loader could not be minified."""


@cache
def loader_code() -> str:
    """`loader.js` minified for ES2017 by esbuild (comments, hence the `<script` in them, gone)."""
    if not ESBUILD.exists():
        raise LoaderError(f"esbuild is missing at {ESBUILD}: run `make setup` to install the pinned npm tools")
    done = subprocess.run(
        [str(ESBUILD), "--minify", "--target=es2017", "--loader=js"],
        input=LOADER_JS.read_text(), capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise LoaderError(f"esbuild could not minify {LOADER_JS}: {done.stderr.strip()}")
    code = done.stdout.strip()
    if "<script" in code.lower() or "</script" in code.lower():
        raise LoaderError(f"{LOADER_JS} minified holds '<script' or '</script', which would end its element")
    return code


def loader_module(config: str) -> str:
    """The text of `.web/app/lookout_loader.js`: the configuration JSON (`config_json`) and the loader."""
    return (
        f"export const {CONFIG_NAME} = {json.dumps(config)};\n"
        f"export const {LOADER_NAME} = {json.dumps(loader_code())};\n"
    )


def _server_only(name: str) -> Var:
    """The module's string in the server render; "" in the browser bundle (Vite replaces
    `import.meta.env.SSR` with false there, and the bundler drops the import)."""
    return Var(
        f'(import.meta.env.SSR ? {name} : "")',
        _var_data=VarData(imports={f"$/{LOADER_MODULE}": [ImportVar(tag=name)]}),
    )


def head_components(settings: Settings, config_element_id: str) -> list[rx.Component]:
    """The configuration element, then the loader, for `rx.App(head_components=...)`; none when
    browser monitoring is off. Reads no setting but the switch: the text is made at compile time."""
    if not settings.browser_monitoring:
        return []
    keep = {"suppressHydrationWarning": True}
    return [
        rx.el.script(_server_only(CONFIG_NAME), type="application/json", id=config_element_id, custom_attrs=keep),
        rx.el.script(_server_only(LOADER_NAME), custom_attrs=keep),
    ]
