"""Generated source maps of a chosen size, for the tests of what symbolication may cost: a minified
file of many lines with its map (each line mapped to the same line of one original source), a file
of nothing but line breaks (what a "64 MiB of newlines" upload is, made smaller), and a browser
event whose frames name such files by debug ID."""

from __future__ import annotations

import json
import uuid
from typing import Any

from app.sourcemaps.maps import StoredMap
from tests.sourcemaps.artifact_zips import JsFile

LINE = b"f();\n"  # each line of a generated file: a call at column 1


def lines_map(name: str, lines: int) -> JsFile:
    """`lines` lines, line N mapped to line N of `src/<name>`: about 10 bytes a line."""
    mappings = "AAAA" + ";AACA" * (lines - 1)
    sourcemap = {"version": 3, "sources": [f"src/{name}"], "names": [], "mappings": mappings}
    return JsFile(f"~/assets/{name}", LINE * lines, json.dumps(sourcemap).encode(), str(uuid.uuid4()))


def newlines_map(name: str, lines: int) -> JsFile:
    """A file of `lines` line breaks and a map of as many empty lines: 2 bytes a line."""
    sourcemap = {"version": 3, "sources": [f"src/{name}"], "names": [], "mappings": ";" * lines}
    return JsFile(f"~/assets/{name}", b"\n" * lines, json.dumps(sourcemap).encode(), str(uuid.uuid4()))


def stored(file: JsFile) -> StoredMap:
    return StoredMap(file.debug_id, file.url.removeprefix("~"), "upload-2-generated", file.source, file.sourcemap)


def url(file: JsFile) -> str:
    return "app://" + file.url.removeprefix("~")


def event_naming(*frames: tuple[JsFile, int]) -> dict[str, Any]:
    """A browser error whose frames (outermost first, as sent) are at column 1 of the given line of
    each file, with the files' debug IDs in `debug_meta`."""
    return {
        "event_id": uuid.uuid4().hex, "platform": "javascript", "level": "error",
        "exception": {"values": [{"type": "Error", "value": "generated", "stacktrace": {"frames": [
            {"abs_path": url(file), "filename": url(file), "function": "f", "lineno": line, "colno": 1}
            for file, line in frames]}}]},
        "debug_meta": {"images": [{"type": "sourcemap", "code_file": url(file), "debug_id": file.debug_id}
                                  for file in dict.fromkeys(file for file, _ in frames)]},
    }


def frames_of(event: dict[str, Any]) -> list[dict[str, Any]]:
    return list(event["exception"]["values"][0]["stacktrace"]["frames"])
