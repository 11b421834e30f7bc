"""Bundle directories written as the build step writes them (reflex_lookout/sourcemaps/bundle.py), with tiny
files: for tests of what happens to many builds."""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path

from reflex_lookout.sourcemaps import bundle
from reflex_lookout.sourcemaps.bundle import BundleFile, Manifest
from reflex_lookout.sourcemaps.pages import PageSource

PAGE = PageSource(module="app.pages.try_errors", function="page", file="app/pages/try_errors.py", line=146)
ROUTE = ".web/app/routes/[try]._index.jsx"


def bundle_of(bundles: Path, number: int, asset_paths: tuple[str, ...] = ("/assets/a.js",)) -> Path:
    """Bundle `number` (newer than every smaller number; its files' debug IDs are UUIDs
    `number * 100 + index`), with ROUTE → PAGE as its page map."""
    build_id = f"{number:020x}"
    directory = bundles / build_id
    files = []
    for index, asset_path in enumerate(asset_paths):
        debug_id = str(uuid.UUID(int=number * 100 + index))
        js = f"console.log({number}, {index});\n//# debugId={debug_id}\n".encode()
        relative = asset_path.lstrip("/")
        (directory / relative).parent.mkdir(parents=True, exist_ok=True)
        (directory / relative).write_bytes(js)
        (directory / f"{relative}.map").write_text(json.dumps({"version": 3, "build": number}))
        files.append(BundleFile(debug_id, asset_path, hashlib.sha256(js).hexdigest(), relative, f"{relative}.map"))
    manifest = Manifest(build_id, 1_000_000.0 + number, tuple(files), {ROUTE: PAGE})
    (directory / bundle.MANIFEST).write_text(manifest.to_json())
    return directory
