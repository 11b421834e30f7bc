"""A Reflex plugin that makes Lookout's production build write hidden source maps.

`build.sourcemap: "hidden"` writes a map beside every chunk without naming it in the chunk; the
build step (app/sourcemaps/build_step.py) takes the maps out of what is served and keeps them for
symbolication. (The dev server's proxy and Sentry's build flag are the monitoring plugin's:
reflex_lookout/browser.py.)
"""

from __future__ import annotations

import re

from reflex_base.constants import ReactRouter
from reflex_base.plugins.base import Plugin, PreCompileContext
from typing_extensions import Unpack

BUILD_SOURCEMAP = re.compile(r"^(  build: \{\n(?:    .*\n)*?    sourcemap: ).*,$", re.MULTILINE)


def hide_source_maps(config_js: str) -> str:
    """`vite.config.js` whose production build writes hidden source maps (replacing Reflex's setting)."""
    edited, count = BUILD_SOURCEMAP.subn(r'\1"hidden",', config_js, count=1)
    if count != 1:
        raise RuntimeError("vite.config.js has no `sourcemap:` entry in `build: {`; Reflex changed its template.")
    return edited


class ViteConfigPlugin(Plugin):
    def pre_compile(self, **context: Unpack[PreCompileContext]) -> None:
        context["add_modify_task"](ReactRouter.VITE_CONFIG_FILE, hide_source_maps)
