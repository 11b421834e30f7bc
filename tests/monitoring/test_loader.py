"""The loader: generated from the settings, inline in every page's head before the app's modules,
and under its byte budget (a size, not a timing)."""

from __future__ import annotations

import gzip
import json
import re

from reflex.compiler import compiler, utils as compiler_utils

from app.monitoring import browser, loader
from app.settings import Settings
from tests.environment import LOCAL_ENV


def _module_strings(text: str) -> dict[str, str]:
    """The exported strings of a generated `lookout_loader.js`."""
    found = re.findall(r"^export const (\w+) = (\".*\");$", text, flags=re.M)
    return {name: json.loads(value) for name, value in found}


def test_the_head_elements_stay_under_the_byte_budget() -> None:
    config = browser.config_json(Settings.from_env(LOCAL_ENV))
    head = (
        f'<script type="application/json" id="{browser.CONFIG_ELEMENT_ID}">{config}</script>'
        f"<script>{loader.loader_code()}</script>"
    )
    size = len(gzip.compress(head.encode(), compresslevel=9))
    assert size <= loader.BUDGET_GZIP_BYTES, f"{size} B gzip > {loader.BUDGET_GZIP_BYTES} B"


def test_the_loader_cannot_end_its_script_element_and_repeats_no_setting() -> None:
    code = loader.loader_code()
    assert "<script" not in code.lower() and "</script" not in code.lower()
    assert browser.CONFIG_ELEMENT_ID in code  # it reads the configuration element ...
    source = loader.LOADER_JS.read_text()
    for literal in ("1024", "3800", "15000", "30000", "/monitoring", "maxBreadcrumbs: 100"):
        assert literal not in source, f"{literal} belongs in the Python settings"  # ... and nothing else


def test_the_generated_module_holds_the_same_json_and_the_minified_loader() -> None:
    config = browser.config_json(Settings.from_env(LOCAL_ENV))
    strings = _module_strings(loader.loader_module(config))
    assert strings == {loader.CONFIG_NAME: config, loader.LOADER_NAME: loader.loader_code()}
    assert json.loads(strings[loader.CONFIG_NAME]) == browser.browser_config(Settings.from_env(LOCAL_ENV))


def test_the_document_has_the_configuration_then_the_loader_in_its_head_before_the_scripts() -> None:
    head = loader.head_components(Settings.from_env(LOCAL_ENV), browser.CONFIG_ELEMENT_ID)
    root = compiler_utils.create_document_root(head, html_lang="en")
    code = compiler._compile_document_root(root)
    assert f'import {{{loader.CONFIG_NAME},{loader.LOADER_NAME}}} from "$/{loader.LOADER_MODULE}"' in code
    config_at = code.index(f'jsx("script",{{id:"{browser.CONFIG_ELEMENT_ID}"')
    loader_at = code.index(f'(import.meta.env.SSR ? {loader.LOADER_NAME} : "")')
    head_end, scripts_at = code.index('jsx("body"'), code.index("jsx(Scripts")
    assert code.index('jsx("head"') < config_at < loader_at < head_end < scripts_at
    # Rendered on the server only; the browser keeps the server's text without a hydration warning.
    assert f'(import.meta.env.SSR ? {loader.CONFIG_NAME} : "")' in code
    assert code.count("suppressHydrationWarning:true") >= 2


def test_no_loader_when_browser_monitoring_is_off() -> None:
    assert loader.head_components(Settings.from_env({"LOOKOUT_BROWSER_MONITORING": "off"}), browser.CONFIG_ELEMENT_ID) == []
