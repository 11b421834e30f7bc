"""The browser SDK's configuration, generated from the settings, and the files it is written into."""

from __future__ import annotations

import json
import re

import pytest
import sqlalchemy

from app import db
from app.inbox.projects import Projects, settle_local_dsn
from app.monitoring import browser
from app.monitoring.settings import Settings, SettingsError
from tests.conftest import LOCAL_ENV


def test_the_configuration_carries_the_spec_values_from_the_settings(engine: sqlalchemy.Engine) -> None:
    settings = Settings.from_env({"SENTRY_ENVIRONMENT": "staging", "SENTRY_RELEASE": "lookout@2"})
    key = settle_local_dsn(settings, engine).public_key  # this install's, from its database
    config = browser.browser_config(settings)
    assert config["dsn"] == f"http://{key}@localhost/1" and config["tunnel"] == "/monitoring"
    assert (config["environment"], config["release"]) == ("staging", "lookout@2")
    assert (config["tracesSampleRate"], config["enableLogs"], config["debug"]) == (1.0, True, False)
    assert (config["maxBreadcrumbs"], config["transportBufferSize"]) == (100, 64)
    assert (config["maxStackFrames"], config["maxStackLineLength"]) == (50, 1024)
    assert (config["idleTimeoutMs"], config["finalTimeoutMs"], config["childSpanTimeoutMs"]) == (1000, 30000, 15000)
    assert config["routeLoadTimeoutMs"] == 3800 and config["notFoundRouteId"] == "routes/[404]._index"


def test_a_configured_dsn_and_tunnel_path_reach_the_browser() -> None:
    settings = Settings.from_env({"SENTRY_DSN": "https://key@o1.ingest.example/7", "LOOKOUT_TUNNEL_PATH": "/t/"})
    config = browser.browser_config(settings)
    assert (config["dsn"], config["tunnel"]) == ("https://key@o1.ingest.example/7", "/t")


def test_ignore_patterns_drop_exactly_the_noise() -> None:
    patterns = [re.compile(p) for p in browser.browser_config(Settings.from_env(LOCAL_ENV))["ignoreErrors"]]
    noise = [
        "Script error", "Script error.", "Javascript error: Script error on line 0",
        "Javascript error: Script error. on line 0", "ResizeObserver loop limit exceeded",
        "ResizeObserver loop completed with undelivered notifications.",
        "Can't find variable: _AutofillCallbackHandler",
    ]
    real = ["Script error in checkout.js", "TypeError: x is undefined", "ResizeObserver is not defined"]
    assert all(any(p.search(m) for p in patterns) for m in noise)
    assert not [m for m in real if any(p.search(m) for p in patterns)]


def test_the_json_is_safe_inside_a_script_element() -> None:
    settings = Settings.from_env({**LOCAL_ENV, "SENTRY_RELEASE": "</script><script>alert(1)</script>&"})
    text = browser.config_json(settings)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["release"] == "</script><script>alert(1)</script>&"


def test_root_code_parses_the_same_json_and_contains_no_setting_of_its_own() -> None:
    code = browser.init_code(Settings.from_env(LOCAL_ENV))
    first_line = code.splitlines()[0]
    assert first_line == f"const LOOKOUT_MONITORING_JSON = {json.dumps(browser.config_json(Settings.from_env(LOCAL_ENV)))};"
    script = browser.INIT_JS.read_text()
    assert f"const LOOKOUT_CONFIG_ELEMENT_ID = {json.dumps(browser.CONFIG_ELEMENT_ID)};" in code
    for literal in ("1024", "3800", "15000", "30000", "bufferSize: 64", "maxBreadcrumbs: 100", browser.CONFIG_ELEMENT_ID):
        assert literal not in script, f"{literal} belongs in the Python settings"


def test_the_entry_client_adds_react_root_error_callbacks() -> None:
    entry = browser.ENTRY_CLIENT_JS.read_text()
    for callback in ("onCaughtError", "onUncaughtError", "onRecoverableError"):
        assert f"{callback}: lookoutReactError," in entry
    # Sentry's handler comes from window.lookout (set up by browser.js before hydration), so that
    # this file imports nothing of Sentry's: a shared chunk would be fetched before interactive.
    assert "window.lookout.reactErrorHandler(error, errorInfo)" in entry and "@sentry" not in entry
    assert "reactErrorHandler: Sentry_reactErrorHandler()" in browser.INIT_JS.read_text()
    assert "hydrateRoot(document, createElement(HydratedRouter)" in entry
    assert browser.BrowserMonitoringPlugin().provides_entry_client()


def test_sentry_is_imported_by_name_at_a_pinned_version() -> None:
    imports = browser.BrowserMonitoring.create().add_imports()
    assert browser.SENTRY_REACT == "@sentry/react@11.12.0"
    assert {var.tag for var in imports[browser.SENTRY_REACT]} == set(browser.SENTRY_NAMES)
    assert all(var.alias == f"Sentry_{var.tag}" for var in imports[browser.SENTRY_REACT])


def test_browser_monitoring_can_be_switched_off() -> None:
    assert Settings.from_env({}).browser_monitoring
    assert not Settings.from_env({"LOOKOUT_BROWSER_MONITORING": "off"}).browser_monitoring
    with pytest.raises(SettingsError, match="LOOKOUT_BROWSER_MONITORING 'maybe' must be on or off"):
        Settings.from_env({"LOOKOUT_BROWSER_MONITORING": "maybe"})


def test_tracing_is_a_chunk_of_its_own_loaded_by_the_page_after_start_up() -> None:
    tracing_names = ("browserTracingIntegration", "startBrowserTracingNavigationSpan", "startInactiveSpan", "getTraceData")
    assert not set(tracing_names) & set(browser.SENTRY_NAMES)  # kept out of root.jsx
    assert browser.TRACING_JS.strip() == f'export {{ {", ".join(tracing_names)} }} from "@sentry/react";'
    # Reflex's hook for events sent to the backend is filled in once tracing has arrived.
    assert "window.__reflex_otel = Object.assign(window.__reflex_otel || {}" in browser.INIT_JS.read_text()
    assert f'import("$/{browser.TRACING_MODULE}")' in browser.INIT_JS.read_text()


def test_the_page_built_carries_the_key_in_the_database(engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """At compile time, as `reflex run` builds the pages: the database migrated, the key read."""
    monkeypatch.setattr(db, "engine", lambda url=None: engine)
    monkeypatch.setattr(browser, "SETTINGS", Settings.from_env({}))
    [code] = browser.BrowserMonitoring.create().add_custom_code()
    [local] = [p for p in Projects(engine).all() if p.id == 1]
    assert json.loads(json.loads(code.splitlines()[0].split(" = ", 1)[1].rstrip(";")))["dsn"] == f"http://{local.public_key}@localhost/1"
    assert local.public_key != "lookout" and len(local.public_key) == 32
