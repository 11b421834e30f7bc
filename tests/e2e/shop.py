"""A small shop on the real `sentry-sdk` that reports one error to a running app's ingest endpoint:
inside a transaction with a log line, from an outer frame holding a local variable, with a browser
context (tests/e2e/test_issue_page.py, and the docs' screenshots: tests/e2e/screenshots.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.e2e.app_server import AppServer
from tests.e2e.local_dsn import local_dsn

SHOP = '''
import logging
import sys

import sentry_sdk

sentry_sdk.init(dsn=sys.argv[1], traces_sample_rate=1.0, enable_logs=True, environment="e2e")
sentry_sdk.set_context("browser", {"name": "Firefox", "version": "128.0"})
log = logging.getLogger("shop")


def charge(amount):
    raise type(sys.argv[3], (ValueError,), {})(f"card declined for {amount}")  # its type names its issue


def checkout(cart_total):
    basket_marker = sys.argv[2]
    return charge(cart_total)


with sentry_sdk.start_transaction(name="POST /api/checkout", op="http.server") as transaction:
    log.warning("checkout started %s", sys.argv[2])
    try:
        checkout(42)
    except ValueError:  # and its subclasses
        event_id = sentry_sdk.capture_exception()
print(event_id, transaction.trace_id)
sentry_sdk.flush(10)
'''


def report(app_server: AppServer, tmp_path: Path, marker: str, kind: str = "ValueError") -> tuple[str, str]:
    """Run the shop with the real sentry-sdk against the app's ingest endpoint: (event id, trace id).
    `marker`: the outer frame's local value and in the log line; `kind`: the error's type, which
    names its issue (the shop's frames are the same each time)."""
    script = tmp_path / "shop.py"  # a file, so that the SDK reads its frames' source lines
    script.write_text(SHOP)
    dsn = f"http://{local_dsn(app_server).public_key}@127.0.0.1:{app_server.port}/1"
    # Run from its own folder, as an app runs from its project: sentry-sdk marks the frames there in-app.
    done = subprocess.run([sys.executable, str(script), dsn, marker, kind], capture_output=True, text=True, timeout=60,
                          check=True, cwd=tmp_path)
    event_id, trace_id = done.stdout.split()
    return event_id, trace_id
