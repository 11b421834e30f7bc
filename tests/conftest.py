"""Shared test set-up: tests run in local mode, whatever the developer's shell holds."""

import os

# Settings are read once at import, so this must happen before `app` is imported.
os.environ["SENTRY_DSN"] = ""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    # Async tests (marked `anyio`) run on asyncio, as the app does under granian.
    return "asyncio"
