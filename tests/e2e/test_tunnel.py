"""The tunnel inside the built app: on the app's own origin, counted on the home page."""

import re

import httpx
from playwright.sync_api import Page, expect

from plugin_support.envelopes import error_event
from reflex_lookout.tunnel import STATS_MAX_AGE_S
from tests.e2e.app_server import ROOT, AppServer
from tests.e2e.local_dsn import local_dsn


def test_tunnel_accepts_local_envelopes_and_the_home_page_counts_them(app_server: AppServer, page: Page) -> None:
    before = httpx.get(app_server.url + "/monitoring/stats").json()
    origin = {"Origin": app_server.url}
    accepted = httpx.post(app_server.url + "/monitoring", content=error_event(str(local_dsn(app_server))), headers=origin)
    assert accepted.status_code == 200, accepted.text
    foreign = httpx.post(app_server.url + "/monitoring", content=error_event("https://k@evil.example/1"))
    assert foreign.status_code == 403
    page.wait_for_timeout(STATS_MAX_AGE_S * 1000)  # the outbox's depth is read at most once a second (the counters are live)
    after = httpx.get(app_server.url + "/monitoring/stats").json()
    assert after["mode"] == "local"
    # At least ours: the app's own SDKs (the server's transactions, a closing page's last posts) may
    # add envelopes at any moment.
    assert after["accepted"] >= before["accepted"] + 1
    assert after["outbox"]["local"]["envelopes"] >= before["outbox"]["local"]["envelopes"] + 1
    assert after["rejected"].get("forbidden_dsn", 0) == before["rejected"].get("forbidden_dsn", 0) + 1

    page.goto(app_server.url + "/")
    expect(page.locator("#figure-accepted")).not_to_have_text("")
    shown = {key: int(page.locator(f"#figure-{key}").text_content() or 0) for key in ("accepted", "local")}
    assert shown["accepted"] >= after["accepted"] and shown["local"] >= after["outbox"]["local"]["envelopes"]


def test_the_browser_can_post_to_the_tunnel_on_its_own_origin(app_server: AppServer, page: Page) -> None:
    page.goto(app_server.url + "/")
    envelope = error_event(str(local_dsn(app_server))).decode()
    status = page.evaluate(
        "async (body) => (await fetch('/monitoring', {method: 'POST', body})).status", envelope
    )
    assert status == 200


def test_dev_server_proxies_the_tunnel_and_the_inbox_api_to_the_backend(app_server: AppServer) -> None:
    # Every compile (prod too) rewrites vite.config.js; in dev Vite uses this block.
    config = (ROOT / ".web" / "vite.config.js").read_text()
    assert config.count("// lookout-tunnel-proxy") == 1
    # The backend URL of the compile that wrote it (the e2e app's own port here, :8000 in dev).
    for path in ("/monitoring", "/api/"):  # the tunnel, and the inbox's endpoints
        assert re.search(rf'"{path}": \{{"target": "http://localhost:\d+", "changeOrigin": false, "xfwd": true\}}', config)
