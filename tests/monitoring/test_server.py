"""sentry-sdk's options for the backend, from the settings; logging into logs, breadcrumbs, events."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import pytest
import sentry_sdk
import sqlalchemy
from reflex_base import otel

from app.projects.registry import settle_local_dsn
from app.settings import Settings
from plugin_support.helpers import CapturingTransport
from reflex_lookout import browser, event_tracing, server
from tests.environment import LOCAL_ENV


def test_options_come_from_the_same_settings_as_the_browser(engine: sqlalchemy.Engine) -> None:
    settings = Settings.from_env({"SENTRY_ENVIRONMENT": "staging", "SENTRY_RELEASE": "r1"})
    key = settle_local_dsn(settings, engine).public_key  # this install's, from its database
    options = server.server_options(settings)
    browser_dsn = browser.browser_config(settings, settings.reporting_dsn)["dsn"]
    assert options["dsn"] == f"http://{key}@localhost/1" == browser_dsn  # the local inbox
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


def in_an_event(name: str = "app.pages.example.ExampleState.act") -> Any:
    """A Reflex event's span, as Reflex opens one (reflex_lookout/event_tracing.py)."""
    tracer = event_tracing.tracer_provider(event_tracing.EventTransactions()).get_tracer("reflex")
    return tracer.start_as_current_span("state.example_state.act", attributes={
        otel.ATTR_EVENT_NAME: "state.example_state.act", otel.ATTR_CODE_FUNCTION_NAME: name,
        otel.ATTR_SESSION_ID: "0123456789abcdef"})


def test_log_records_become_logs_breadcrumbs_and_error_events(capturing: CapturingTransport) -> None:
    log = logging.getLogger("app.pages.example")
    with in_an_event():
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


def test_work_outside_an_event_leaves_no_breadcrumbs_for_the_next_error(capturing: CapturingTransport) -> None:
    # The tunnel's requests and the background tasks (feeder, leases, alert sender) run outside any event.
    logging.getLogger("app.inbox.example").warning("outbox sums, worker lease")
    sentry_sdk.add_breadcrumb(category="query", message="select sum(size) from outbox")
    with in_an_event():
        logging.getLogger("app.pages.example").warning("the click's own line")
        sentry_sdk.capture_message("the click failed")
    logging.getLogger("app.inbox.example").error("a background error is still reported")
    sentry_sdk.flush()
    click, background = capturing.items("event")
    assert [c["message"] for c in click["breadcrumbs"]["values"]] == ["the click's own line"]
    assert background["logentry"]["message"] == "a background error is still reported"
    assert not background.get("breadcrumbs", {}).get("values")


def test_a_housekeeping_handler_makes_no_transaction_and_no_breadcrumbs(capturing: CapturingTransport) -> None:
    from app.pages.traces import TracesState  # the live pages' refresh loop (ConsoleState's) is marked @housekeeping

    name = otel._code_function_name(TracesState.event_handlers["watch"].fn, "")  # as Reflex names it
    assert name == "app.console.state.TracesState.watch"
    with in_an_event(name):
        logging.getLogger("app.console.state").warning("refreshed")
        sentry_sdk.capture_message("an error while refreshing")
    with in_an_event():
        pass
    sentry_sdk.flush()
    [transaction] = capturing.items("transaction")
    assert transaction["transaction"] == "ExampleState.act"
    [event] = capturing.items("event")
    assert event["message"] == "an error while refreshing" and not event.get("breadcrumbs", {}).get("values")


def test_a_librarys_routine_warnings_are_not_logs_of_the_app(capturing: CapturingTransport) -> None:
    with in_an_event():
        logging.getLogger("reflex_base.utils.console").warning("form controls submitted by id are deprecated")
        logging.getLogger("granian").error("a worker died")
        logging.getLogger("app.pages.example").warning("the app's own warning")
    sentry_sdk.flush()
    bodies = [i["body"] for b in capturing.items("log") for i in b["items"]]
    assert bodies == ["a worker died", "the app's own warning"]


def test_the_pipelines_own_loggers_are_left_out(capturing: CapturingTransport) -> None:
    logging.getLogger("reflex_lookout.forwarder").error("upstream refused an envelope")
    logging.getLogger("reflex_lookout.tunnel").warning("the outbox is full")
    sentry_sdk.flush()
    assert capturing.items("event") == []
    assert [i["body"] for b in capturing.items("log") for i in b["items"]] == []


def test_browser_errors_that_reflex_forwards_are_not_reported_a_second_time(capturing: CapturingTransport) -> None:
    from app.app import frontend_exception_handler

    frontend_exception_handler(Exception("Lookout test: reported by the browser SDK already"))
    sentry_sdk.flush()
    assert capturing.items("event") == [] and capturing.items("log") == []


@pytest.mark.parametrize("debug", [False, True])
def test_sentry_sdks_own_debug_lines_are_made_only_with_debug_on(debug: bool) -> None:
    # sentry-sdk's filter would drop them anyway without `debug`; they are not even made then.
    settings = dataclasses.replace(Settings.from_env(LOCAL_ENV), debug=debug)
    server.configure_logging(settings)
    sdk_logger = logging.getLogger("sentry_sdk.errors")
    assert sdk_logger.isEnabledFor(logging.DEBUG) is debug
    assert sdk_logger.isEnabledFor(logging.ERROR)

