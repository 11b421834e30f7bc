"""The plugin's tests' shared fixtures (plugin_support/): an outbox database on SQLite and PostgreSQL,
a real upstream, a tunnel pipeline. They run in this repository (`make test`, its pytest.ini) and on
their own, with only the plugin and its `test` extra installed (plugin/pytest.ini)."""

from __future__ import annotations

import pytest

from plugin_support.databases import engine
from plugin_support.pipeline import make_pipeline, upstream

__all__ = ["engine", "make_pipeline", "upstream"]


@pytest.fixture
def anyio_backend() -> str:
    # Async tests (marked `anyio`) run on asyncio, as Reflex's backend does.
    return "asyncio"
