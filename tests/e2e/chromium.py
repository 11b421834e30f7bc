"""Debian's Chromium and the flags it runs with here: the e2e tests and bench/page_cost.py use both.

Playwright's own browser download is not reachable from this machine.
"""

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
