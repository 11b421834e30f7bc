"""Debian's Chromium, the flags it runs with here, and when a page is interactive: the e2e tests and
bench/page_cost.py use all three.

Playwright's own browser download is not reachable from this machine.
"""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]

# An init script, run before the page's scripts: `window.__lookoutInteractiveAt` is `performance.now()`
# when Reflex's providers mount (they set window.__reflex in an effect, after hydration).
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

