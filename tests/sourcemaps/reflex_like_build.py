"""Real minified builds of a small app laid out as Reflex lays out `.web/`, for the symbolication
tests: a route module (`.web/app/routes/[try]._index.jsx`) that calls a page's component module
(`.web/app_components/app/pages/try_errors.jsx`) through Reflex's runtime (`.web/utils/state.js`)
and a package (`.web/node_modules/tiny-dispatch/`). esbuild (`.tools/`, installed by `make setup`)
bundles and minifies it into `.web/build/client/assets/` with an external map, as Vite's hidden
maps are; `sentry-cli sourcemaps inject` gives the chunk its debug ID; node runs the chunk and
its V8 stack trace becomes a browser event's frames (real minified lines and columns), with the
URL the chunk would be served at."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from app.sourcemaps.maps import StoredMap
from app.sourcemaps.own_build import SENTRY_CLI
from reflex_lookout.sourcemaps.pages import PageSource
from tests.environment import IN_CI
from tests.sourcemaps.real_build import ESBUILD

ROUTE = ".web/app/routes/[try]._index.jsx"
COMPONENTS = ".web/app_components/app/pages/try_errors.jsx"
PAGE = PageSource(module="app.pages.try_errors", function="page", file="app/pages/try_errors.py", line=30)
ORIGIN = "http://127.0.0.1:3000"
SOURCES = {
    ROUTE: 'import { renderBomb, anonymousBomb } from "../../app_components/app/pages/try_errors.jsx";\n'
           'import { dispatch } from "../../utils/state.js";\n'
           "\n"
           "export function Component() {\n"
           "  return dispatch(() => renderBomb(true));\n"
           "}\n"
           "\n"
           "export function clicked() {\n"
           "  return dispatch(anonymousBomb());\n"
           "}\n",
    COMPONENTS: "export function renderBomb(armed) {\n"
                "  if (armed) {\n"
                '    throw new Error("Lookout try: a render error");\n'
                "  }\n"
                "  return null;\n"
                "}\n"
                "\n"
                "export function anonymousBomb() {\n"
                '  return () => { throw new Error("Lookout try: an anonymous error"); };\n'
                "}\n",
    ".web/utils/state.js": 'import { invoke } from "tiny-dispatch";\n'
                           "\n"
                           "export function dispatch(handler) {\n"
                           "  const result = invoke(handler);\n"
                           "  return result;\n"
                           "}\n",
    ".web/node_modules/tiny-dispatch/index.js": "export function invoke(callback) {\n  return callback();\n}\n",
    ".web/node_modules/tiny-dispatch/package.json": '{"name": "tiny-dispatch", "type": "module", "main": "index.js"}\n',
    ".web/package.json": '{"type": "module"}\n',  # node runs the chunk as the browser does: a module
}
# Run the chunk's `entry` export; print the error's V8 stack as JSON.
RUNNER = """const [chunk, entry] = process.argv.slice(2);
const module = await import(chunk);
try { module[entry](); } catch (error) { console.log(JSON.stringify(error.stack)); }
"""
V8_FRAME = re.compile(r"^\s*at (?:(?P<function>.+?) \()?(?P<url>file://.+?):(?P<line>\d+):(?P<column>\d+)\)?$")


def need_tools() -> None:
    """Skip (saying why) when esbuild, sentry-cli or node is missing, except in CI, where that fails."""
    missing = [str(p) for p in (ESBUILD, SENTRY_CLI) if not p.exists()] + ([] if shutil.which("node") else ["node"])
    if missing:
        message = f"{', '.join(missing)} missing (`make setup` installs the tools)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


@dataclass
class Build:
    """One build: its chunk (served at `asset_path`), debug ID and map."""
    root: Path
    chunk: Path
    debug_id: str
    build_id: str
    pages: dict[str, PageSource] = field(default_factory=lambda: {ROUTE: PAGE})

    @property
    def asset_path(self) -> str:
        return f"/assets/{self.chunk.name}"

    @property
    def url(self) -> str:
        return ORIGIN + self.asset_path

    def stored(self, sourcemap: bytes | None = None) -> StoredMap:
        return StoredMap(self.debug_id, self.asset_path, self.build_id, self.chunk.read_bytes(),
                         Path(f"{self.chunk}.map").read_bytes() if sourcemap is None else sourcemap, self.pages)

    def frames(self, entry: str = "Component") -> list[dict[str, Any]]:
        """The frames, outermost first as Sentry orders them, of the error the chunk's `entry`
        throws under node: each as the browser SDK sends it, with the URL it is served at."""
        runner = self.root / "run.mjs"
        runner.write_text(RUNNER)
        stack = json.loads(subprocess.run(["node", str(runner), self.chunk.as_uri(), entry], check=True,
                                          capture_output=True, text=True).stdout)
        frames = []
        for line in stack.splitlines()[1:]:
            found = V8_FRAME.match(line)
            if found and found["url"] == self.chunk.as_uri():
                frames.append({"filename": self.url, "abs_path": self.url, "function": found["function"] or "?",
                               "lineno": int(found["line"]), "colno": int(found["column"]), "in_app": True})
        assert frames, stack
        return frames[::-1]

    def event(self, entry: str = "Component", value: str = "Lookout try: a render error",
              images: bool = True) -> dict[str, Any]:
        """A browser SDK's error event for the error `entry` throws."""
        event: dict[str, Any] = {"platform": "javascript", "level": "error", "exception": {"values": [
            {"type": "Error", "value": value, "stacktrace": {"frames": self.frames(entry)},
             "mechanism": {"type": "onerror", "handled": False}}]}}
        if images:
            event["debug_meta"] = {"images": [{"type": "sourcemap", "code_file": self.url, "debug_id": self.debug_id}]}
        return event


def build(root: Path, build_id: str, extra: str = "", entry_names: str = "[name]-[hash]") -> Build:
    """Write SOURCES under `root` (with `extra` prepended to the runtime module, which moves the
    hashes, minified names and columns), bundle and minify the route module, inject a debug ID."""
    for relative, text in SOURCES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(extra + text if relative == ".web/utils/state.js" else text)
    assets = root / ".web" / "build" / "client" / "assets"
    subprocess.run([str(ESBUILD), str(root / ROUTE), "--bundle", "--minify", "--format=esm", "--sourcemap=external",
                    f"--outdir={assets}", f"--entry-names={entry_names}", "--log-level=warning"],
                   check=True, cwd=root / ".web")
    subprocess.run([str(SENTRY_CLI), "sourcemaps", "inject", str(assets)], check=True, capture_output=True)
    [chunk] = assets.glob("*.js")
    debug_id = json.loads(Path(f"{chunk}.map").read_text())["debugId"]
    return Build(root, chunk, debug_id, build_id)


# Kept by the bundler, on the runtime module's first line: moves what follows it in the chunk (hash,
# minified names, columns), not the sources' lines.
SECOND_BUILD = 'globalThis.lookoutBuild = "second build"; '


@pytest.fixture(scope="session")
def first_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    need_tools()
    return build(tmp_path_factory.mktemp("first"), "build-1")


@pytest.fixture(scope="session")
def second_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The same sources built in another directory, with a change that moves the chunk's hash,
    minified names and columns, and another naming pattern."""
    need_tools()
    return build(tmp_path_factory.mktemp("elsewhere") / "deeper", "build-2", SECOND_BUILD, "[name].[hash]")


class Maps:
    """A `MapLookup` over a few builds' maps, kept in a dict (as the library keeps them in a table);
    it counts its lookups."""

    def __init__(self, *stored: StoredMap) -> None:
        self.maps = list(stored)
        self.lookups = 0

    def by_debug_id(self, debug_id: str, project_id: int = 1) -> StoredMap | None:
        self.lookups += 1
        return next((m for m in self.maps if m.debug_id and m.debug_id == debug_id), None)

    def by_asset_path(self, asset_path: str) -> StoredMap | None:
        self.lookups += 1
        return next((m for m in reversed(self.maps) if m.asset_path == asset_path), None)
