"""The built app in Chromium: the home page and the custom 404 page."""

import httpx
from playwright.sync_api import Page, expect

from tests.e2e.app_server import AppServer


def test_home_renders_title_and_status_panel(app_server: AppServer, page: Page) -> None:
    page.goto(app_server.url + "/")
    expect(page).to_have_title("Lookout")
    expect(page.locator("#page-title")).to_have_text("Lookout")
    panel = page.locator("#status-panel")
    expect(panel).to_be_visible()
    # Filled by the running backend (on_load), not baked in at build time.
    expect(page.locator("#status-destination")).to_have_text("local inbox")
    expect(page.locator("#status-tunnel")).to_have_text("/monitoring")
    expect(page.locator("#lookout-header")).to_contain_text("Overview")


def test_unknown_path_shows_custom_404(app_server: AppServer, page: Page) -> None:
    response = page.goto(app_server.url + "/no/such/page")
    assert response is not None and response.status == 404
    expect(page.locator("#not-found-title")).to_have_text("Page not found")
    expect(page).to_have_title("Not found · Lookout")


def test_client_navigation_to_unknown_path_shows_404(app_server: AppServer, page: Page) -> None:
    page.goto(app_server.url + "/")
    expect(page.locator("#status-destination")).to_have_text("local inbox")
    page.evaluate("window.history.pushState({}, '', '/missing'); dispatchEvent(new PopStateEvent('popstate'))")
    expect(page.locator("#not-found-title")).to_have_text("Page not found")


def test_home_answers_200_over_plain_http(app_server: AppServer) -> None:
    assert httpx.get(app_server.url + "/").status_code == 200


def test_the_favicon_is_served(app_server: AppServer) -> None:
    answer = httpx.get(app_server.url + "/favicon.ico")
    assert answer.status_code == 200 and answer.content[:4] == b"\x00\x00\x01\x00"  # an icon file's header
