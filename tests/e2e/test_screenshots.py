"""The docs' screenshots can be taken (tests/e2e/screenshots.py): each page renders what it shows,
the issues' pages and, fed by real SDKs, the releases', monitors' and feedback pages, and each file
is a PNG of the viewport's size."""

from __future__ import annotations

import struct
from pathlib import Path

from playwright.sync_api import Page

from tests.e2e.app_server import AppServer
from tests.e2e.screenshots import HEALTH_SHOTS, SHOTS, VIEWPORT, take, take_health


def assert_viewport_pngs(written: list[Path]) -> None:
    for path in written:
        header = path.read_bytes()[:24]
        assert header[:8] == b"\x89PNG\r\n\x1a\n"
        assert struct.unpack(">II", header[16:24]) == (VIEWPORT["width"], VIEWPORT["height"])


def test_the_docs_screenshots_are_taken_from_the_running_app(app_server: AppServer, page: Page, tmp_path: Path) -> None:
    written = take(page, app_server, tmp_path / "images", tmp_path)
    assert [p.name for p in written] == [name for name, _ in SHOTS]
    assert_viewport_pngs(written)


def test_the_health_screenshots_are_taken_from_the_running_app_fed_by_real_sdks(
        app_server: AppServer, page: Page, tmp_path: Path) -> None:
    written = take_health(page, app_server, tmp_path / "images", tmp_path)
    assert [p.name for p in written] == [name for name, _ in HEALTH_SHOTS]
    assert_viewport_pngs(written)
