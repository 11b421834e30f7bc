"""The reflex-lookout plugin's built asset: `js/loader.min.js`, `js/loader.js` minified for ES2017 by
the pinned esbuild (Makefile's NPM_TOOLS). The wheel ships the minified file, so a host app needs no
esbuild; this repository makes it (`make plugin-assets`, i.e. `python -m app.plugin_assets`) and a
test checks it is current.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from reflex_lookout import browser

ROOT = Path(__file__).resolve().parent.parent
ESBUILD = ROOT / ".tools" / "node_modules" / ".bin" / "esbuild"
LOADER_JS = browser.JS / "loader.js"


class AssetError(RuntimeError):
    """The loader could not be minified."""


def minified_loader() -> str:
    """`loader.js` minified (comments, hence the `<script` in them, gone), as the wheel ships it."""
    if not ESBUILD.exists():
        raise AssetError(f"esbuild is missing at {ESBUILD}: run `make setup` to install the pinned npm tools")
    done = subprocess.run(
        [str(ESBUILD), "--minify", "--target=es2017", "--loader=js"],
        input=LOADER_JS.read_text(), capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise AssetError(f"esbuild could not minify {LOADER_JS}: {done.stderr.strip()}")
    return done.stdout


def main() -> int:
    browser.LOADER_MIN_JS.write_text(minified_loader())
    print(f"wrote {browser.LOADER_MIN_JS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
