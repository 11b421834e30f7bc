"""Triage in Chromium on the session's app (SQLite): tests/e2e/triage.py drives it (the same flow runs
on PostgreSQL in tests/e2e/test_scale_out.py)."""

from __future__ import annotations

from playwright.sync_api import Page

from tests.e2e.app_server import AppServer
from tests.e2e.triage import drive_triage


def test_search_in_the_url_bulk_resolve_merge_assign_and_comment(app_server: AppServer, page: Page) -> None:
    drive_triage(page, app_server)
