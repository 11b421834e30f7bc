"""Shared test set-up: tests run in local mode, whatever the developer's shell holds."""

import os

# Settings are read once at import, so this must happen before `app` is imported.
os.environ["SENTRY_DSN"] = ""

import pytest


@pytest.fixture
def anyio_backend() -> str:
    # Async tests (marked `anyio`) run on asyncio, as the app does under granian.
    return "asyncio"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Browser tests last: fast feedback first, and Playwright's sync API keeps an event loop
    running in the main thread once started, which async tests cannot share."""
    items.sort(key=lambda item: "/e2e/" in str(item.path))
