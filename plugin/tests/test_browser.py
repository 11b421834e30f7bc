"""The browser side: the SDK's configuration from the settings, the loader and the head elements that
carry it, the JavaScript files, and the dev server's config edits."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from reflex.compiler import compiler, utils as compiler_utils

from reflex_lookout import browser
from reflex_lookout.dsn import Dsn
from reflex_lookout.settings import MonitoringSettings

DSN = Dsn.parse("http://3f2a@127.0.0.1:3000/2")
CONFIG = 'export default defineConfig((config) => ({\n  base: "/",\n  server: {\n    port: process.env.PORT,\n  },\n}));\n'


def settings(**env: str) -> MonitoringSettings:
    return MonitoringSettings.resolve({}, env)


def module_strings(text: str) -> dict[str, str]:
    """The exported strings of a generated `lookout_loader.js`."""
    found = re.findall(r"^export const (\w+) = (\".*\");$", text, flags=re.M)
    return {name: json.loads(value) for name, value in found}


def test_the_configuration_carries_the_spec_values_and_the_dsn_given() -> None:
    config = browser.browser_config(settings(SENTRY_ENVIRONMENT="staging", SENTRY_RELEASE="shop@2"), DSN)
    assert config["dsn"] == str(DSN) and config["tunnel"] == "/monitoring"
    assert (config["environment"], config["release"]) == ("staging", "shop@2")
    assert (config["tracesSampleRate"], config["enableLogs"], config["debug"]) == (1.0, True, False)
    assert (config["maxBreadcrumbs"], config["transportBufferSize"]) == (100, 64)
    assert (config["maxStackFrames"], config["maxStackLineLength"]) == (50, 1024)
    assert (config["idleTimeoutMs"], config["finalTimeoutMs"], config["childSpanTimeoutMs"]) == (1000, 30000, 15000)
    assert config["routeLoadTimeoutMs"] == 3800 and config["notFoundRouteId"] == "routes/[404]._index"
    assert browser.browser_config(settings(LOOKOUT_TUNNEL_PATH="/t/"), DSN)["tunnel"] == "/t"


def test_ignore_patterns_drop_exactly_the_noise() -> None:
    patterns = [re.compile(p) for p in browser.browser_config(settings(), DSN)["ignoreErrors"]]
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
    text = browser.config_json(settings(SENTRY_RELEASE="</script><script>alert(1)</script>&"), DSN)
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["release"] == "</script><script>alert(1)</script>&"


def test_the_javascript_contains_no_setting_of_its_own() -> None:
    for script in (browser.INIT_JS, browser.SDK_JS, browser.JS / "loader.js"):
        text = script.read_text()
        for literal in ("1024", "3800", "15000", "30000", '"/monitoring"', "'/monitoring'", "bufferSize: 64",
                        "maxBreadcrumbs: 100"):
            assert literal not in text, f"{literal} in {script.name} belongs in the Python settings"
    assert browser.CONFIG_ELEMENT_ID not in browser.INIT_JS.read_text()
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


def test_root_imports_nothing_of_sentry_which_is_installed_at_a_pinned_version() -> None:
    component = browser.BrowserMonitoring.create()
    assert browser.SENTRY_REACT == "@sentry/react@11.12.0"
    # installed, never rendered; source-map-js is imported by the dev overlay alone (declared in every mode so that
    # package.json stays the same in dev and prod)
    assert component.lib_dependencies == [browser.SENTRY_REACT, browser.SOURCE_MAP_JS]
    assert "source-map" not in browser.INIT_JS.read_text()
    assert not [lib for lib in component.add_imports() if "sentry" in lib]
    assert "Sentry_" not in browser.INIT_JS.read_text() and "@sentry" not in browser.INIT_JS.read_text()


def test_the_sdk_imports_sentry_by_name() -> None:
    sdk = browser.SDK_JS.read_text()
    # Named imports only: a namespace import defeats tree-shaking (REFLEX-NOTES: 86 KB → 238 KB gzip).
    assert re.search(r'^import \{[^}]+\} from "@sentry/react";$', sdk, flags=re.M)
    assert "import * as" not in sdk and "export function start()" in sdk


def test_the_sdk_is_a_chunk_of_its_own_loaded_after_start_up_or_on_an_error() -> None:
    root = browser.INIT_JS.read_text()
    assert f'import("$/{browser.SDK_MODULE}")' in root  # dynamic: not fetched before interactive
    assert "window.lookout._load = lookoutLoadSdk;" in root  # the loader calls it on an error
    assert "if (window.lookout._want) lookoutLoadSdk();" in root  # an error before root.jsx ran
    # Reflex's hook for events sent to the backend is the loader's until tracing has arrived.
    assert "window.__reflex_otel = Object.assign(window.__reflex_otel || {}" in browser.SDK_JS.read_text()


def test_the_head_elements_stay_under_the_byte_budget() -> None:
    head = (
        f'<script type="application/json" id="{browser.CONFIG_ELEMENT_ID}">{browser.config_json(settings(), DSN)}</script>'
        f"<script>{browser.loader_code()}</script>"
    )
    size = len(gzip.compress(head.encode(), compresslevel=9))
    assert size <= browser.BUDGET_GZIP_BYTES, f"{size} B gzip > {browser.BUDGET_GZIP_BYTES} B"


def test_the_loader_cannot_end_its_script_element_and_reads_the_configuration_element() -> None:
    code = browser.loader_code()
    assert "<script" not in code.lower() and "</script" not in code.lower()
    assert browser.CONFIG_ELEMENT_ID in code


def test_the_generated_module_holds_the_same_json_and_the_minified_loader() -> None:
    strings = module_strings(browser.loader_module(settings(), DSN))
    assert strings == {browser.CONFIG_NAME: browser.config_json(settings(), DSN), browser.LOADER_NAME: browser.loader_code()}
    assert json.loads(strings[browser.CONFIG_NAME]) == browser.browser_config(settings(), DSN)


def test_the_document_has_the_configuration_then_the_loader_in_its_head_before_the_scripts() -> None:
    root = compiler_utils.create_document_root(browser.head_components(), html_lang="en")
    code = compiler._compile_document_root(root)
    assert f'import {{{browser.CONFIG_NAME},{browser.LOADER_NAME}}} from "$/{browser.LOADER_MODULE}"' in code
    config_at = code.index(f'jsx("script",{{id:"{browser.CONFIG_ELEMENT_ID}"')
    loader_at = code.index(f'(import.meta.env.SSR ? {browser.LOADER_NAME} : "")')
    head_end, scripts_at = code.index('jsx("body"'), code.index("jsx(Scripts")
    assert code.index('jsx("head"') < config_at < loader_at < head_end < scripts_at
    # Rendered on the server only; the browser keeps the server's text without a hydration warning.
    assert f'(import.meta.env.SSR ? {browser.CONFIG_NAME} : "")' in code
    assert code.count("suppressHydrationWarning:true") >= 2


def test_the_proxy_is_added_once_and_replaced_on_recompile() -> None:
    once = browser.add_proxy(CONFIG, ["/monitoring", "/api/"], "http://localhost:8000")
    assert '"/monitoring": {"target": "http://localhost:8000", "changeOrigin": false, "xfwd": true}' in once
    assert '"/api/": {"target": "http://localhost:8000", "changeOrigin": false, "xfwd": true}' in once
    twice = browser.add_proxy(once, ["/monitoring", "/api/"], "http://localhost:8001")
    assert twice.count("lookout-tunnel-proxy") == 2  # one block: its start and end markers
    assert "8001" in twice and "8000" not in twice
    assert browser.add_proxy(twice, ["/monitoring", "/api/"], "http://localhost:8000") == once


def test_an_unknown_vite_template_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="server"):
        browser.add_proxy("export default {}", ["/monitoring"], "http://localhost:8000")
    with pytest.raises(RuntimeError, match="base"):
        browser.add_sentry_flags("export default {}", debug=False)


def test_the_sentry_debug_flag_follows_the_setting_and_is_replaced_on_recompile() -> None:
    off = browser.add_sentry_flags(CONFIG, debug=False)
    assert '  base: "/",\n  // lookout-sentry-flags\n  define: {"__SENTRY_DEBUG__": "false"},\n' in off
    on = browser.add_sentry_flags(off, debug=True)
    assert on.count("define:") == 1 and '"__SENTRY_DEBUG__": "true"' in on
    assert browser.add_sentry_flags(on, debug=False) == off
    both = browser.add_proxy(off, ["/monitoring"], "http://localhost:8000")
    assert browser.add_sentry_flags(both, debug=False) == both  # the edits leave each other alone


def test_the_feedback_widget_is_in_the_pages_only_when_asked_for() -> None:
    """Monitoring(feedback=True): the widget's module (js/feedback.js); otherwise one that imports nothing, so the
    SDK chunk's import of it bundles none of Sentry's feedback code."""
    off = MonitoringSettings.resolve({}, {})
    on = MonitoringSettings.resolve({"feedback": True}, {})
    assert not off.feedback and MonitoringSettings.resolve({}, {"REFLEX_LOOKOUT_FEEDBACK": "on"}).feedback
    assert browser.feedback_module(on) == browser.FEEDBACK_JS.read_text() and "feedbackIntegration" in browser.feedback_module(on)
    assert "import" not in browser.feedback_module(off) and "export function start" in browser.feedback_module(off)
    dsn = MonitoringSettings.resolve({"dsn": "http://k@127.0.0.1:3000/2"}, {}).dsn
    assert browser.browser_config(on, dsn)["feedback"] is True and browser.browser_config(off, dsn)["feedback"] is False
    assert 'import { start as startFeedback } from "$/app/lookout_feedback.js";' in browser.SDK_JS.read_text()
