import pytest

from app.monitoring.vite_proxy import add_proxy

CONFIG = 'export default defineConfig((config) => ({\n  server: {\n    port: process.env.PORT,\n  },\n}));\n'


def test_proxy_is_added_once_and_replaced_on_recompile() -> None:
    once = add_proxy(CONFIG, "/monitoring", "http://localhost:8000")
    assert '"/monitoring": {"target": "http://localhost:8000", "changeOrigin": false}' in once
    twice = add_proxy(once, "/monitoring", "http://localhost:8001")
    assert twice.count("lookout-tunnel-proxy") == 2  # one block: its start and end markers
    assert "8001" in twice and "8000" not in twice
    assert add_proxy(twice, "/monitoring", "http://localhost:8000") == once


def test_unknown_template_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="server"):
        add_proxy("export default {}", "/monitoring", "http://localhost:8000")
