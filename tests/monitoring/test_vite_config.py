import pytest

from app.monitoring.vite_config import add_proxy, add_sentry_flags

CONFIG = 'export default defineConfig((config) => ({\n  base: "/",\n  server: {\n    port: process.env.PORT,\n  },\n}));\n'


def test_proxy_is_added_once_and_replaced_on_recompile() -> None:
    once = add_proxy(CONFIG, ["/monitoring", "/api/"], "http://localhost:8000")
    assert '"/monitoring": {"target": "http://localhost:8000", "changeOrigin": false, "xfwd": true}' in once
    assert '"/api/": {"target": "http://localhost:8000", "changeOrigin": false, "xfwd": true}' in once
    twice = add_proxy(once, ["/monitoring", "/api/"], "http://localhost:8001")
    assert twice.count("lookout-tunnel-proxy") == 2  # one block: its start and end markers
    assert "8001" in twice and "8000" not in twice
    assert add_proxy(twice, ["/monitoring", "/api/"], "http://localhost:8000") == once


def test_unknown_template_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="server"):
        add_proxy("export default {}", ["/monitoring"], "http://localhost:8000")


def test_sentry_debug_flag_follows_the_setting_and_is_replaced_on_recompile() -> None:
    off = add_sentry_flags(CONFIG, debug=False)
    assert '  base: "/",\n  // lookout-sentry-flags\n  define: {"__SENTRY_DEBUG__": "false"},\n' in off
    on = add_sentry_flags(off, debug=True)
    assert on.count("define:") == 1 and '"__SENTRY_DEBUG__": "true"' in on
    assert add_sentry_flags(on, debug=False) == off
    both = add_proxy(off, ["/monitoring"], "http://localhost:8000")
    assert add_sentry_flags(both, debug=False) == both  # the edits leave each other alone


def test_template_without_base_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="base"):
        add_sentry_flags("export default {}", debug=False)
