"""Another app's source maps in the built app (issue #15): a small shop bundled and minified by the
pinned esbuild with the real `@sentry/browser`, its chunk given a debug ID by `sentry-cli sourcemaps
inject`, uploaded to Lookout by the real `sentry-cli sourcemaps upload` with a token from
`python -m app.sourcemaps.tokens`, served from a static server of its own on loopback (another origin)
and loaded in Chromium: its error arrives with the original file and function. The same bundle
uploaded again sends no chunk."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from tests.e2e.app_server import ROOT, AppServer
from tests.e2e.helpers import inbox_event

TOOLS = ROOT / ".tools" / "node_modules" / ".bin"
# @sentry/browser from the npm registry, the version the app's own @sentry/react pins (installed with it).
NODE_MODULES = ROOT / ".web" / "node_modules"

SHOP_JS = """import * as Sentry from "@sentry/browser";
import { checkout } from "./cart.js";

Sentry.init({ dsn: window.SHOP_DSN, release: "shop@1" });
window.shopLastEventId = () => Sentry.lastEventId();
document.getElementById("buy").addEventListener("click", () => {
  setTimeout(() => checkout({ items: window.shopItems }), 0);
});
"""
CART_JS = """export function checkout(order) {
  const total = order.items.reduce((sum, item) => sum + item.price, 0);
  if (total > 10) throw new Error("Demo shop: the cart is over its limit");
  return total;
}
"""
PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Demo shop</title></head>
<body><button id="buy">Buy</button>
<script>window.SHOP_DSN = "{dsn}"; window.shopItems = [{{"price": 7}}, {{"price": 8}}];</script>
<script src="/assets/shop.js"></script></body></html>
"""


def run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=120)


def lookout_cli(app_server: AppServer, *args: str) -> str:
    done = run([sys.executable, "-m", *args], env=app_server.env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def shop(app_server: AppServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The shop built, injected and served: its project's id, DSN, URL, token and build directory."""
    root = tmp_path_factory.mktemp("shop")
    (root / "src").mkdir()
    (root / "src" / "shop.js").write_text(SHOP_JS)
    (root / "src" / "cart.js").write_text(CART_JS)
    assets = root / "dist" / "assets"
    built = run([str(TOOLS / "esbuild"), str(root / "src" / "shop.js"), "--bundle", "--minify", "--sourcemap",
                 "--format=iife", f"--outfile={assets / 'shop.js'}"], env={"NODE_PATH": str(NODE_MODULES)})
    assert built.returncode == 0, built.stderr
    injected = run([str(TOOLS / "sentry-cli"), "sourcemaps", "inject", str(assets)],
                   env={"SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "true"})
    assert injected.returncode == 0, injected.stderr
    assert "//# debugId=" in (assets / "shop.js").read_text()

    host = app_server.url.removeprefix("http://")
    dsn = lookout_cli(app_server, "app.projects.registry", "--host", host, "add", "demo-shop").strip()
    project_id = dsn.rsplit("/", 1)[1]
    token = re.search(r"\b[0-9a-f]{64}\b", lookout_cli(app_server, "app.sourcemaps.tokens", "add", "demo-shop"))[0]
    (root / "dist" / "index.html").write_text(PAGE.format(dsn=dsn))
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root / "dist")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {"project": project_id, "dsn": dsn, "url": f"http://127.0.0.1:{server.server_port}",
               "token": token, "assets": str(assets)}
    finally:
        server.shutdown()


def upload(app_server: AppServer, shop: dict[str, str], token: str | None = None) -> subprocess.CompletedProcess[str]:
    return run([str(TOOLS / "sentry-cli"), "sourcemaps", "upload", shop["assets"]], env={
        "SENTRY_URL": app_server.url, "SENTRY_ORG": "lookout", "SENTRY_PROJECT": shop["project"],
        "SENTRY_AUTH_TOKEN": token or shop["token"], "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "true",
    })


def test_an_uploaded_app_reports_original_frames_and_a_second_upload_sends_no_chunk(
    app_server: AppServer, shop: dict[str, str], browser: Browser
) -> None:
    first = upload(app_server, shop)
    assert first.returncode == 0, first.stdout + first.stderr
    second = upload(app_server, shop)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "Nothing to upload" in second.stdout + second.stderr  # every chunk was on the server already

    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(shop["url"] + "/index.html")
        page.click("#buy")
        page.wait_for_function("() => !!window.shopLastEventId()")
        event_id = page.evaluate("() => window.shopLastEventId()")
    finally:
        context.close()
    stored = inbox_event(app_server, event_id)
    assert str(stored["project_id"]) == shop["project"]
    exception = stored["event"]["exception"]["values"][-1]
    assert exception["value"] == "Demo shop: the cart is over its limit"
    frames = exception["stacktrace"]["frames"]
    [thrower] = [f for f in frames if "cart.js" in (f.get("filename") or "")]
    assert thrower["function"] == "checkout"
    assert 'throw new Error("Demo shop: the cart is over its limit")' in thrower["context_line"]
    assert thrower["data"]["sourcemap"]["resolved_with"] == "debug_id"
    assert not any("/assets/shop.js" in (f.get("filename") or "") for f in frames)  # none left minified
    raw = exception["raw_stacktrace"]["frames"]
    assert any("/assets/shop.js" in (f.get("abs_path") or f.get("filename") or "") for f in raw)


def test_a_wrong_token_is_refused_with_a_sentence(app_server: AppServer, shop: dict[str, str]) -> None:
    refused = upload(app_server, shop, token="0" * 64)
    assert refused.returncode == 1
    assert "401" in refused.stderr and "token" in refused.stderr.lower()
