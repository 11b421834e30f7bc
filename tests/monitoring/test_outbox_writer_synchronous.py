"""The outbox's group-commit writer on Lookout's own SQLite database (app/db.py), whose `synchronous`
setting decides where commits wait; the writer's own tests are the plugin's (plugin/tests/test_outbox_writer.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app import db
from plugin_support.helpers import row
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.outbox_writer import LOOP_BUSY_TIMEOUT_MS, OutboxWriter


@pytest.mark.parametrize(("synchronous", "on_loop"), [("NORMAL", True), ("FULL", False)])
def test_commits_wait_on_a_thread_only_when_they_wait_for_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, synchronous: str, on_loop: bool
) -> None:
    monkeypatch.setattr(db, "SQLITE_SYNCHRONOUS", synchronous)  # read by each new connection
    engine = db.engine(f"sqlite:///{tmp_path / synchronous}.db")
    db.migrate(engine)
    store = OutboxStore(engine)
    writer = OutboxWriter(store)

    async def main() -> int:
        await writer.submit(row())
        assert writer._connection is not None
        busy_timeout = writer._connection.cursor().execute("PRAGMA busy_timeout").fetchone()[0]
        await writer.close()
        return busy_timeout

    busy_timeout = asyncio.run(main())
    assert writer._on_loop is on_loop and len(store.next_rows("d1", 10)) == 1
    # A commit on the loop gives up on a lock after 100 ms; on a thread it may wait (db.py: 10 s).
    assert busy_timeout == (LOOP_BUSY_TIMEOUT_MS if on_loop else 10_000)
