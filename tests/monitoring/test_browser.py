"""The browser SDK's configuration, generated from the settings, and the files it is written into."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sqlalchemy
from reflex.utils.prerequisites import get_web_dir

from app import db
from app.inbox.projects import Projects, settle_local_dsn
from app.monitoring import browser, loader
from app.settings import Settings
from reflex_lookout.settings import SettingsError
from tests.environment import LOCAL_ENV


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


def test_the_javascript_contains_no_setting_of_its_own() -> None:
    for script in (browser.INIT_JS, browser.SDK_JS):
        text = script.read_text()
        for literal in ("1024", "3800", "15000", "30000", "bufferSize: 64", "maxBreadcrumbs: 100", browser.CONFIG_ELEMENT_ID):
            assert literal not in text, f"{literal} in {script.name} belongs in the Python settings"
    assert "window.lookout.config" in browser.INIT_JS.read_text()  # the loader's, parsed from the page


def test_the_entry_client_adds_react_root_error_callbacks() -> None:
    entry = browser.ENTRY_CLIENT_JS.read_text()
    for callback in ("onCaughtError", "onUncaughtError", "onRecoverableError"):
        assert f"{callback}: lookoutReactError," in entry
    # The handler comes from window.lookout (the loader's, then Sentry's once the SDK took over), so
    # that this file imports nothing of Sentry's: a shared chunk would be fetched before interactive.
    assert "window.lookout.reactErrorHandler(error, errorInfo)" in entry and "@sentry" not in entry
    assert "reactErrorHandler: reactErrorHandler()" in browser.SDK_JS.read_text()
    assert "hydrateRoot(document, createElement(HydratedRouter)" in entry
    assert browser.BrowserMonitoringPlugin().provides_entry_client()


def test_root_imports_nothing_of_sentry_which_is_installed_at_a_pinned_version() -> None:
    component = browser.BrowserMonitoring.create()
    assert browser.SENTRY_REACT == "@sentry/react@11.12.0"
    assert component.lib_dependencies == [browser.SENTRY_REACT]  # installed, never rendered
    assert not [lib for lib in component.add_imports() if "sentry" in lib]
    assert "Sentry_" not in browser.INIT_JS.read_text() and "@sentry" not in browser.INIT_JS.read_text()


def test_the_sdk_imports_sentry_by_name() -> None:
    sdk = browser.SDK_JS.read_text()
    # Named imports only: a namespace import defeats tree-shaking (REFLEX-NOTES: 86 KB → 238 KB gzip).
    assert re.search(r'^import \{[^}]+\} from "@sentry/react";$', sdk, flags=re.M)
    assert "import * as" not in sdk and "export function start()" in sdk


def test_browser_monitoring_can_be_switched_off() -> None:
    assert Settings.from_env({}).browser_monitoring
    assert not Settings.from_env({"LOOKOUT_BROWSER_MONITORING": "off"}).browser_monitoring
    with pytest.raises(SettingsError, match="LOOKOUT_BROWSER_MONITORING 'maybe' must be on or off"):
        Settings.from_env({"LOOKOUT_BROWSER_MONITORING": "maybe"})


def test_the_sdk_is_a_chunk_of_its_own_loaded_after_start_up_or_on_an_error() -> None:
    root = browser.INIT_JS.read_text()
    assert f'import("$/{browser.SDK_MODULE}")' in root  # dynamic: not fetched before interactive
    assert "window.lookout._load = lookoutLoadSdk;" in root  # the loader calls it on an error
    assert "if (window.lookout._want) lookoutLoadSdk();" in root  # an error before root.jsx ran
    # Reflex's hook for events sent to the backend is the loader's until tracing has arrived.
    assert "window.__reflex_otel = Object.assign(window.__reflex_otel || {}" in browser.SDK_JS.read_text()


def test_the_page_built_carries_the_key_in_the_database(engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """At compile time, as `reflex run` builds the pages: the database migrated, the key read."""
    monkeypatch.setattr(db, "engine", lambda url=None: engine)
    monkeypatch.setattr(browser, "SETTINGS", Settings.from_env({}))
    tasks: list = []
    browser.BrowserMonitoringPlugin().pre_compile(add_save_task=tasks.append)  # type: ignore[call-arg]  # the plugin reads only add_save_task
    [task] = tasks
    files = {Path(path).relative_to(get_web_dir()).as_posix(): text for path, text in task()}
    assert files[browser.SDK_MODULE] == browser.SDK_JS.read_text()
    assert files["app/entry.client.js"] == browser.ENTRY_CLIENT_JS.read_text()
    declaration = f"export const {loader.CONFIG_NAME} = "
    [line] = [line for line in files[loader.LOADER_MODULE].splitlines() if line.startswith(declaration)]
    config = json.loads(json.loads(line.split(" = ", 1)[1].rstrip(";")))
    [local] = [p for p in Projects(engine).all() if p.id == 1]
    assert config["dsn"] == f"http://{local.public_key}@localhost/1"
    assert local.public_key != "lookout" and len(local.public_key) == 32
