"""Real browser stack traces over a production build's source maps, for the benchmarks.

The build is the app's own when one is on disk (the newest bundle under `.web/lookout-sourcemaps/`,
made by `reflex run --env prod` or `reflex export`), else one made here: esbuild (`.tools/`) bundles
React, React Router, Radix and lucide from `.web/node_modules` into split, minified chunks with
hidden maps, and the app's build step (reflex_lookout/sourcemaps/build_step.py) injects debug IDs with
sentry-cli and writes the bundle.

Events are `bench/envelope.py`'s browser error event (breadcrumbs, contexts) with a stack spread
over the build's largest chunks: each frame a real position of a real token of the chunk's map
(picked from the map's mappings with symbolic's `SourceMapView`, never past a line's end), its
function the minified identifier there, its URL where the chunk is served, and `debug_meta.images`
naming each chunk's debug ID, as the browser SDK sends them.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from symbolic.sourcemap import SourceMapView

from app.plugin_assets import ESBUILD
from app.sourcemaps import own_build
from bench.envelope import error_event
from reflex_lookout.sourcemaps import build_step, bundle

ROOT = Path(__file__).resolve().parent.parent
ORIGIN = "http://127.0.0.1:3000"
SHARED_STACKS = 10
# What the fallback build bundles from .web/node_modules: one entry each, shared code split out.
ESBUILD_ENTRIES = {
    "client.js": 'import { hydrateRoot } from "react-dom/client";\nexport const start = hydrateRoot;\n',
    "router.js": 'export { createBrowserRouter, RouterProvider, Link } from "react-router";\n',
    "themes.js": 'export { Theme, Button, Dialog, Select, Table } from "@radix-ui/themes";\n',
    "icons.js": 'export { Bug, Activity, Search } from "lucide-react";\n',
}
IDENTIFIER = re.compile(rb"[A-Za-z_$][\w$]*")


def find_build(given: Path | None, esbuild: bool, workdir: Path) -> tuple[Path, bundle.Manifest, str]:
    """The bundle to measure — `given`, else the app's newest, else one built under `workdir`
    (always, with `esbuild`) — its manifest, and which it is, in words."""
    if given is not None:
        return given, bundle.read_manifest(given), "the bundle given with --bundle"
    found = [] if esbuild else bundle.present(ROOT / ".web" / bundle.DIRECTORY)
    if found:
        return *found[0], "the app's production build"
    print("building a bundle with esbuild ...", flush=True)
    return *esbuild_bundle(workdir), "a build made here with esbuild (React, React Router, Radix, lucide)"


def esbuild_bundle(workdir: Path) -> tuple[Path, bundle.Manifest]:
    modules = ROOT / ".web" / "node_modules"
    if not ESBUILD.exists() or not (modules / "react-dom").is_dir():
        raise SystemExit(f"No bundle to measure: build the app (`reflex export`), or install {ESBUILD} "
                         f"(`make setup`) and {modules} (any `reflex run`).")
    sources, static = workdir / "src", workdir / "static"
    sources.mkdir()
    for name, text in ESBUILD_ENTRIES.items():
        (sources / name).write_text(text)
    subprocess.run([str(ESBUILD), *(str(sources / n) for n in ESBUILD_ENTRIES), "--bundle", "--splitting",
                    "--format=esm", "--minify", "--sourcemap=external", f"--outdir={static / 'assets'}",
                    "--entry-names=[name]-[hash]", "--chunk-names=[name]-[hash]", "--log-level=error",
                    '--define:process.env.NODE_ENV="production"'],
                   check=True, env={**os.environ, "NODE_PATH": str(modules)})
    directory = build_step.make_bundle(static, workdir / "bundles", own_build.SENTRY_CLI, keep=1)
    return directory, bundle.read_manifest(directory)


@dataclass
class Chunk:
    """A chunk of the build as frames name it, and real positions of its map's tokens."""
    asset_path: str
    debug_id: str
    size: int  # JavaScript + map, bytes
    positions: list[tuple[int, int, str]]  # 1-based line, column, the minified name there

    @property
    def url(self) -> str:
        return ORIGIN + self.asset_path


def chunks_of(directory: Path, manifest: bundle.Manifest, count: int, per_chunk: int, rng: random.Random) -> list[Chunk]:
    """The `count` largest chunks, each with up to `per_chunk` positions of tokens that have a source."""
    def size(file: bundle.BundleFile) -> int:
        return (directory / file.js).stat().st_size + (directory / file.map).stat().st_size

    chunks = []
    for file in sorted(manifest.files, key=size, reverse=True)[:count]:
        source, sourcemap = (directory / file.js).read_bytes(), (directory / file.map).read_bytes()
        lines, view = source.split(b"\n"), SourceMapView.from_json_bytes(sourcemap)
        positions = []
        for index in rng.sample(range(len(view)), min(len(view), per_chunk * 2)):
            token = view[index]
            if token.src is None or token.dst_line >= len(lines) or token.dst_col >= len(lines[token.dst_line]):
                continue  # a token past a line's end is no position a browser reports
            name = IDENTIFIER.match(lines[token.dst_line], token.dst_col)
            positions.append((token.dst_line + 1, token.dst_col + 1, name.group().decode() if name else "?"))
            if len(positions) == per_chunk:
                break
        chunks.append(Chunk(file.asset_path, file.debug_id, len(source) + len(sourcemap), positions))
    return chunks


class Stacks:
    """Browser events over the chunks: `frames_per_chunk` frames from each, interleaved as a real
    stack crosses chunks; each `next_stack` takes positions not taken before (round each pool)."""

    def __init__(self, chunks: list[Chunk], frames_per_chunk: int) -> None:
        self.chunks, self.frames_per_chunk = chunks, frames_per_chunk
        self._at = [0] * len(chunks)

    @property
    def frames(self) -> int:
        return self.frames_per_chunk * len(self.chunks)

    def next_stack(self) -> list[dict[str, Any]]:
        frames = []
        for _ in range(self.frames_per_chunk):
            for c, chunk in enumerate(self.chunks):
                line, column, name = chunk.positions[self._at[c] % len(chunk.positions)]
                self._at[c] += 1
                frames.append({"filename": chunk.url, "abs_path": chunk.url, "function": name, "lineno": line,
                               "colno": column, "in_app": True})
        return frames

    def event(self, frames: list[dict[str, Any]], value: str) -> dict[str, Any]:
        event = error_event(time.time())
        event["event_id"] = uuid.uuid4().hex
        event["exception"]["values"][0].update(value=value, stacktrace={"frames": frames})
        event["debug_meta"] = {"images": [{"type": "sourcemap", "code_file": c.url, "debug_id": c.debug_id}
                                          for c in self.chunks]}
        return event

    def envelopes(self, count: int, own_share: float) -> list[bytes]:
        """`count` envelopes (no DSN in the header): `own_share` of them, spread evenly, with a stack
        of their own, the others with one of SHARED_STACKS stacks in turn."""
        shared = [self.next_stack() for _ in range(SHARED_STACKS)]
        made, turn = [], 0
        for n in range(count):
            if int((n + 1) * own_share) > int(n * own_share):
                event = self.event(self.next_stack(), f"failure {n}")
            else:
                event = self.event(shared[turn % SHARED_STACKS], f"shared failure {turn % SHARED_STACKS}")
                turn += 1
            payload = json.dumps(event, separators=(",", ":")).encode()
            header = json.dumps({"event_id": event["event_id"]}).encode()
            made.append(b"\n".join([header, json.dumps({"type": "event", "length": len(payload)}).encode(), payload]))
        return made


def mapped(event: dict[str, Any]) -> int:
    """How many frames of the event's first exception symbolication mapped."""
    frames = event["exception"]["values"][0]["stacktrace"]["frames"]
    return sum("sourcemap" in f.get("data", {}) for f in frames)
