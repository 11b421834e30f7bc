"""What a benchmark prints besides its figures: a goal's verdict, and the versions measured."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys


def goal(value: float, target: float, at_least: bool) -> str:
    met = value >= target if at_least else value <= target
    return f"goal {'≥' if at_least else '≤'} {target:g}: {'met' if met else 'NOT met'}"


def version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def versions() -> str:
    """Python, granian and its event loop, httpx, sniffio: what a server benchmark's figures depend on."""
    fast_loops = [name for name in ("rloop", "uvloop") if importlib.util.find_spec(name)]
    loop = f"the {fast_loops[0]} loop" if fast_loops else "the asyncio loop (no rloop/uvloop installed)"
    return (f"Python {sys.version.split()[0]}, granian {version('granian')} on {loop}, httpx {version('httpx')},"
            f" sniffio {version('sniffio')}")
