"""The plugin's shipped `loader.min.js` is `loader.js` as the pinned esbuild minifies it now: an edit of
the loader without `make plugin-assets` fails here, not in a host app's pages."""

from app import plugin_assets
from reflex_lookout import browser


def test_the_shipped_minified_loader_is_current() -> None:
    assert browser.LOADER_MIN_JS.read_text() == plugin_assets.minified_loader(), "run `make plugin-assets`"
    assert browser.loader_code() == plugin_assets.minified_loader().strip()
