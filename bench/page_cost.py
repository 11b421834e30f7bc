"""What browser monitoring costs the page: first-load bytes and load-to-interactive time of `/`.

Builds the front end twice (`reflex export --frontend-only`), with LOOKOUT_BROWSER_MONITORING on and
off, serves both builds as static files on loopback, and loads `/` in Debian's headless Chromium,
alternating between the two, each load in a fresh browser context (empty cache). Prints a table and
the ratios next to the goals (monitoring adds ≤ 45 KB gzip; interactive time ratio ≤ 1.05).

    .venv/bin/python bench/page_cost.py [--loads 15]

- bytes: every response of the first load of `/` (document, scripts, styles), each compressed with
  gzip -9 (the build's own .gz files use the same algorithm), summed.
- interactive: `performance.now()` when Reflex's root providers have mounted (it sets
  `window.__reflex` in an effect, after hydration), i.e. when the page answers clicks.
No backend runs: the page's websocket fails in both variants alike; the SDK's posts to the tunnel
fail too, after the page is interactive.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gzip
import http.server
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.chromium import CHROMIUM, CHROMIUM_FLAGS  # noqa: E402

REFLEX = ROOT / ".venv" / "bin" / "reflex"
GOAL_ADDED_GZIP_KB, GOAL_RATIO = 45.0, 1.05
# Runs before the page's scripts: note when Reflex's providers mount (they set window.__reflex).
MARK_INTERACTIVE = """
Object.defineProperty(window, "__reflex", {
  configurable: true,
  get() { return this.__lookoutBenchReflex; },
  set(value) {
    if (window.__lookoutInteractiveAt === undefined) window.__lookoutInteractiveAt = performance.now();
    this.__lookoutBenchReflex = value;
  },
});
"""


def build(variant: str, into: Path) -> Path:
    env = {**os.environ, "LOOKOUT_BROWSER_MONITORING": variant, "SENTRY_DSN": ""}
    env["PATH"] = f"{ROOT / '.tools' / 'node_modules' / '.bin'}:{env['PATH']}"
    subprocess.run(
        [str(REFLEX), "export", "--frontend-only", "--no-zip", "--env", "prod"],
        cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )
    target = into / variant
    shutil.copytree(ROOT / ".web" / "build" / "client", target)
    return target


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def load(browser, url: str) -> tuple[float, int, int, int]:  # noqa: ANN001 (Playwright's Browser)
    """One cold load of `url`: ms to interactive, then the raw and gzip bytes of what was fetched
    until then, and the gzip bytes fetched within 2 s after (what is loaded once idle)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        page.add_init_script(MARK_INTERACTIVE)
        bodies: dict[str, bytes] = {}
        page.on("response", lambda r: bodies.__setitem__(r.url, r.body()) if r.ok and r.url.startswith(url) and
                r.request.resource_type in ("document", "script", "stylesheet") else None)
        page.goto(url + "/", wait_until="load")
        page.wait_for_function("() => window.__lookoutInteractiveAt !== undefined", timeout=30_000)
        page.wait_for_timeout(2000)  # what is fetched once the page is idle
        interactive = float(page.evaluate("() => window.__lookoutInteractiveAt"))
        # When each file arrived, by the page's own clock (the document counts as before).
        arrived = dict(page.evaluate(
            "() => performance.getEntriesByType('resource').map((e) => [e.name, e.responseEnd])"
        ))
        early = [body for name, body in bodies.items() if arrived.get(name, 0.0) <= interactive]
        late = [body for name, body in bodies.items() if arrived.get(name, 0.0) > interactive]
        return (interactive, sum(len(b) for b in early), sum(len(gzip.compress(b, 9)) for b in early),
                sum(len(gzip.compress(b, 9)) for b in late))
    finally:
        context.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--loads", type=int, default=15, help="cold loads of / per variant (default 15)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lookout-page-cost-") as tmp:
        print("building the front end without and with browser monitoring ...", flush=True)
        builds = {variant: build(variant, Path(tmp)) for variant in ("off", "on")}
        times: dict[str, list[float]] = {"off": [], "on": []}
        sizes: dict[str, tuple[int, int, int]] = {}
        with serve(builds["off"]) as off_url, serve(builds["on"]) as on_url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            urls = {"off": off_url, "on": on_url}
            for variant in ("off", "on"):
                load(browser, urls[variant])  # warm the server's file cache, not measured
            for _ in range(args.loads):
                for variant in ("off", "on"):  # alternating, so drift hits both alike
                    interactive, raw, gz, later = load(browser, urls[variant])
                    times[variant].append(interactive)
                    sizes[variant] = (raw, gz, later)
            browser.close()
    print(f"\nFirst load of / in headless Chromium, {args.loads} cold loads per variant, alternating.\n")
    print("Bytes fetched until the page is interactive (raw, gzip -9), then gzip bytes fetched once idle.\n")
    print(f"{'variant':<22}{'raw':>12}{'gzip':>11}{'once idle':>12}{'interactive p50':>18}{'p90':>10}")
    for variant, label in (("off", "without monitoring"), ("on", "with monitoring")):
        raw, gz, later = sizes[variant]
        ordered = sorted(times[variant])
        p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(f"{label:<22}{raw / 1024:>9.1f} KB{gz / 1024:>8.1f} KB{later / 1024:>9.1f} KB"
              f"{statistics.median(ordered):>15.1f} ms{p90:>7.1f} ms")
    added = (sizes["on"][1] - sizes["off"][1]) / 1024
    added_later = (sizes["on"][2] - sizes["off"][2]) / 1024
    ratio = statistics.median(times["on"]) / statistics.median(times["off"])
    # Loads alternate, so each "on" load has an "off" neighbour measured under the same conditions.
    paired = statistics.median(on / off for on, off in zip(times["on"], times["off"]))
    print(f"\nmonitoring adds {added:.1f} KB gzip before the page is interactive   (goal ≤ {GOAL_ADDED_GZIP_KB:g} KB: "
          f"{'met' if added <= GOAL_ADDED_GZIP_KB else 'NOT met'})")
    print(f"  and {added_later:.1f} KB gzip once it is idle (the tracing chunk): {added + added_later:.1f} KB in all")
    print(f"interactive with / without = {ratio:.3f}   (goal ≤ {GOAL_RATIO}: {'met' if ratio <= GOAL_RATIO else 'NOT met'})")
    print(f"  median of the {len(times['on'])} paired ratios (each load with its neighbour) = {paired:.3f}")


if __name__ == "__main__":
    main()
