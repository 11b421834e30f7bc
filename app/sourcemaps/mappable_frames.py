"""Which of an event's stack frames symbolication can map: a JavaScript frame from a URL (an http,
https, file or app scheme) with a line and a column (`position_of`), the stack traces that have one
(`frames_of`), and the debug ID the event names for each URL (`images_of`, from `debug_meta.images`).
"""

from __future__ import annotations

from typing import Any

from app.sourcemaps.maps import normal_debug_id

MAX_IMAGES = 1000
MAX_URL = 2048
MAX_POSITION = 10_000_000
URL_SCHEMES = ("http", "https", "file", "app")


def frames_of(holder: dict[str, Any]) -> list[Any]:
    """The frames of `holder`'s stack trace when one of them can be mapped; else none."""
    stacktrace = holder.get("stacktrace")
    frames = stacktrace.get("frames") if isinstance(stacktrace, dict) else None
    return frames if isinstance(frames, list) and any(isinstance(f, dict) and position_of(f) for f in frames) else []


def position_of(frame: Any) -> tuple[str, int, int] | None:
    """(URL, line, column) of a JavaScript frame from a URL; None for any other frame."""
    if not isinstance(frame, dict):
        return None
    line, column = frame.get("lineno"), frame.get("colno")
    # `type(...) is int`: a bool is no position (and the check is the cheapest; every frame takes it)
    if not (type(line) is int and type(column) is int and 1 <= line <= MAX_POSITION and 1 <= column <= MAX_POSITION):
        return None
    url = frame.get("abs_path")
    if not isinstance(url, str):
        url = frame.get("filename")
    if not isinstance(url, str) or len(url) > MAX_URL:
        return None
    scheme, _, rest = url.partition("://")
    return (url, line, column) if rest and scheme.lower() in URL_SCHEMES else None


def images_of(event: dict[str, Any]) -> dict[str, str]:
    """URL → debug ID, from the event's `debug_meta.images` of type `sourcemap`."""
    meta = event.get("debug_meta")
    images = meta.get("images") if isinstance(meta, dict) else None
    found: dict[str, str] = {}
    for image in images[:MAX_IMAGES] if isinstance(images, list) else []:
        if isinstance(image, dict) and image.get("type") == "sourcemap" and isinstance(image.get("code_file"), str):
            debug_id = normal_debug_id(image.get("debug_id"))
            if debug_id and len(image["code_file"]) <= MAX_URL:
                found.setdefault(image["code_file"], debug_id)
    return found
