"""A real production-like build for the source-map tests: esbuild (`.tools/`, installed by `make
setup`) bundles and minifies a few small modules into `<static_dir>/assets/` with code splitting and
external maps, then the `sourceMappingURL` lines are removed, as Vite's `sourcemap: "hidden"` leaves them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from app.plugin_assets import ESBUILD

MODULES = {
    "main.js": 'import { helper } from "./helper.js";\n'
               'export function start() { return import("./lazy.js").then((m) => m.boom(helper(2))); }\n'
               "start();\n",
    "helper.js": "export function helper(x) {\n  return x * 21;\n}\n",
    "lazy.js": 'export function boom(value) {\n  if (value > 1) {\n    throw new Error("boom " + value);\n  }\n}\n',
}


def build(static_dir: Path, sources: Path, extra: str = "") -> list[Path]:
    """Build MODULES (with `extra` appended to helper.js, to move the hashes) into `static_dir`;
    returns the chunks."""
    assert ESBUILD.exists(), f"{ESBUILD} is missing: `make setup` installs it"
    sources.mkdir(parents=True, exist_ok=True)
    for name, text in MODULES.items():
        (sources / name).write_text(text + (extra if name == "helper.js" else ""))
    subprocess.run(
        [str(ESBUILD), str(sources / "main.js"), "--bundle", "--splitting", "--format=esm", "--minify",
         "--sourcemap=external", f"--outdir={static_dir / 'assets'}", "--entry-names=[name]-[hash]",
         "--chunk-names=[name]-[hash]", "--log-level=warning"],
        check=True,
    )
    chunks = sorted((static_dir / "assets").glob("*.js"))
    for chunk in chunks:
        chunk.write_text(re.sub(r"^//# sourceMappingURL=.*\n?", "", chunk.read_text(), flags=re.MULTILINE))
    return chunks

