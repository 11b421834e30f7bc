"""The backend process's start: the schema brought up to date, then this install's local DSN read."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from app import db, startup
from app.projects.registry import Projects
from app.settings import Settings


@pytest.mark.anyio
async def test_a_start_on_a_new_database_migrates_it_and_reads_the_key_it_made(tmp_path: Path) -> None:
    engine = db.engine(f"sqlite:///{tmp_path / 'new.db'}")
    settings = Settings.from_env({})
    try:
        async with startup.prepare_process(settings, engine):
            [project] = Projects(engine).all()
            assert settings.reporting_dsn == settings.local_dsn == Projects(engine).local_dsn()
            assert project.public_key != "lookout"
    finally:
        gc.unfreeze()  # what the start froze, for the rest of this test process


@pytest.mark.anyio
async def test_a_start_imports_the_source_maps_of_the_builds_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.sourcemaps.library import MapLibrary
    from tests.sourcemaps import fake_bundles

    engine = db.engine(f"sqlite:///{tmp_path / 'new.db'}")
    monkeypatch.setenv("REFLEX_WEB_WORKDIR", str(tmp_path / "web"))  # where Reflex builds, and the bundles are
    fake_bundles.bundle_of(tmp_path / "web" / "lookout-sourcemaps", 1)
    try:
        async with startup.prepare_process(Settings.from_env({}), engine):
            assert MapLibrary(engine).by_asset_path("/assets/a.js").build_id == f"{1:020x}"
    finally:
        gc.unfreeze()
