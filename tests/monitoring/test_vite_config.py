"""Lookout's production build writes hidden source maps, whatever Reflex set, beside the monitoring
plugin's own edits of the same file."""

import pytest
from reflex_base.compiler.templates import vite_config_template

from app.monitoring.vite_config import hide_source_maps
from reflex_lookout.browser import add_proxy, add_sentry_flags

CONFIG = 'export default defineConfig((config) => ({\n  base: "/",\n  server: {\n    port: process.env.PORT,\n  },\n}));\n'


def test_the_production_build_writes_hidden_source_maps_whatever_reflex_set() -> None:
    for reflex_setting in (False, True, "inline"):
        generated = vite_config_template(
            base="/", hmr=True, force_full_reload=False, experimental_hmr=False, prod_react=False,
            warmup_routes=False, react_compiler=False, sourcemap=reflex_setting, minify=True, allowed_hosts=False,
        )
        hidden = hide_source_maps(generated)
        assert hidden.count("sourcemap:") == 1 and '\n    sourcemap: "hidden",\n' in hidden
        assert hide_source_maps(hidden) == hidden
        both = add_sentry_flags(add_proxy(hidden, ["/monitoring"], "http://localhost:8000"), debug=False)
        assert hide_source_maps(both) == both  # the edits leave each other alone


def test_template_without_a_build_sourcemap_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="sourcemap"):
        hide_source_maps(CONFIG)
