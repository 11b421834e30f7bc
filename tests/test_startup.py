"""The backend process's start: the schema brought up to date, then this install's local DSN read."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from app import db, startup
from app.inbox.projects import Projects
from app.monitoring.settings import Settings


@pytest.mark.anyio
async def test_a_start_on_a_new_database_migrates_it_and_reads_the_key_it_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = db.engine(f"sqlite:///{tmp_path / 'new.db'}")
    settings = Settings.from_env({})
    monkeypatch.setattr(db, "engine", lambda url=None: engine)
    monkeypatch.setattr(startup, "SETTINGS", settings)
    try:
        async with startup.prepare_process():
            [project] = Projects(engine).all()
            assert settings.reporting_dsn == settings.local_dsn == Projects(engine).local_dsn()
            assert project.public_key != "lookout"
    finally:
        gc.unfreeze()  # what the start froze, for the rest of this test process
