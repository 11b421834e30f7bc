"""The tunnel pipeline and the upstream of the plugin's tests (plugin/tests/plugin_support/pipeline.py),
here on Lookout's migrated database (the `engine` fixture: tests/databases.py)."""

from __future__ import annotations

from plugin_support.pipeline import make_pipeline, upstream

__all__ = ["make_pipeline", "upstream"]
