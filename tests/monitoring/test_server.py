"""sentry-sdk's options for the backend, from the settings; logging into logs, breadcrumbs, events."""

from __future__ import annotations

import logging

import pytest
import sentry_sdk
import sqlalchemy

from app.inbox.projects import settle_local_dsn
from app.monitoring import browser, server
from app.settings import Settings
from tests.environment import LOCAL_ENV
from tests.monitoring.helpers import CapturingTransport


def test_options_come_from_the_same_settings_as_the_browser(engine: sqlalchemy.Engine) -> None:
    settings = Settings.from_env({"SENTRY_ENVIRONMENT": "staging", "SENTRY_RELEASE": "r1"})
    key = settle_local_dsn(settings, engine).public_key  # this install's, from its database
    options = server.server_options(settings)
    assert options["dsn"] == f"http://{key}@localhost/1" == browser.browser_config(settings)["dsn"]  # the local inbox
    assert (options["environment"], options["release"]) == ("staging", "r1")
    assert options["traces_sample_rate"] == 1.0 and options["enable_logs"] is True and options["debug"] is False
    assert (options["max_breadcrumbs"], options["transport_queue_size"]) == (100, 64)
    assert options["send_default_pii"] is False and options["include_local_variables"] is False
    with_dsn = server.server_options(Settings.from_env({"SENTRY_DSN": "https://k@sentry.example.org/5"}))
    assert with_dsn["dsn"] == "https://k@sentry.example.org/5"


def test_transactions_on_the_not_found_route_are_dropped() -> None:
    assert server.drop_not_found({"tags": {"reflex.route": "/404"}}, {}) is None
    kept = {"tags": {"reflex.route": "/try"}}
    assert server.drop_not_found(kept, {}) is kept and server.drop_not_found({}, {}) == {}


@pytest.fixture
def capturing(sentry_init) -> CapturingTransport:
    transport = CapturingTransport()
    settings = Settings.from_env(LOCAL_ENV)
    sentry_init(transport=transport, **server.server_options(settings))
    server.configure_logging(settings)
    return transport


def test_log_records_become_logs_breadcrumbs_and_error_events(capturing: CapturingTransport) -> None:
    log = logging.getLogger("app.pages.example")
    log.debug("below the level")
    log.info("an info line %s", "with an argument")
    log.error("something failed")
    sentry_sdk.flush()
    [event] = capturing.items("event")
    assert event["logentry"]["message"] == "something failed" and event["level"] == "error"
    crumbs = [c["message"] for c in event["breadcrumbs"]["values"]]
    assert "an info line with an argument" in crumbs and "below the level" not in crumbs
    bodies = [item["body"] for batch in capturing.items("log") for item in batch["items"]]
    assert "an info line with an argument" in bodies and "something failed" in bodies
    assert "below the level" not in bodies


def test_the_pipelines_own_loggers_are_left_out(capturing: CapturingTransport) -> None:
    logging.getLogger("app.monitoring.forwarder").error("upstream refused an envelope")
    logging.getLogger("app.monitoring.tunnel").warning("the outbox is full")
    sentry_sdk.flush()
    assert capturing.items("event") == []
    assert [i["body"] for b in capturing.items("log") for i in b["items"]] == []


def test_browser_errors_that_reflex_forwards_are_not_reported_a_second_time(capturing: CapturingTransport) -> None:
    from app.app import frontend_exception_handler

    frontend_exception_handler(Exception("Lookout test: reported by the browser SDK already"))
    sentry_sdk.flush()
    assert capturing.items("event") == [] and capturing.items("log") == []
