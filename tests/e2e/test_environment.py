"""Under `reflex run --env prod` (the e2e app, as `make prod`) the home page, the backend's own reports and
the pages' SDK all say "production": `reflex run` reads rxconfig.py, and Lookout's settings with it,
before it sets REFLEX_ENV_MODE, and forks the backend workers from that process
(reflex_lookout/settings.py, `MonitoringSettings.environment`)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from tests.e2e.app_server import AppServer
from tests.e2e.captured import Outbox
from tests.e2e.helpers import open_page


def test_the_home_page_the_backends_reports_and_the_pages_sdk_say_production(
    app_server: AppServer, page: Page, outbox: Outbox
) -> None:
    after = outbox.mark()
    open_page(page, app_server, "/")
    expect(page.locator("#status-environment")).to_have_text("production")
    assert page.evaluate("() => window.lookout.config.environment") == "production"

    # The home page's on_load, traced by the backend's sentry-sdk; the page load, by the browser's.
    server = outbox.wait_for("transaction", lambda t: t.get("platform") == "python"
                             and t["contexts"]["trace"].get("op") == "reflex.event", after)
    browser = outbox.wait_for("transaction", lambda t: t.get("platform") == "javascript"
                              and t["contexts"]["trace"].get("op") == "pageload", after)
    assert server and browser
    assert {t.get("environment") for t in server + browser} == {"production"}
