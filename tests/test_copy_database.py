"""Moving the data of a SQLite file into another database (PostgreSQL, or SQLite)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy

from app import db
from app.console.accounts import Accounts, Viewer
from app.copy_database import CopyError, copy, main
from app.inbox.reading import InboxReader
from app.inbox.search import IssueSearch
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import LOCAL, OutboxStore, new_row
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope


def filled_sqlite(path: Path) -> tuple[sqlalchemy.Engine, list[dict]]:
    engine = db.engine(f"sqlite:///{path}")
    db.migrate(engine)
    inbox = InboxStore(engine)
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    events = [error("'" + "abc"[n % 3] + "'") for n in range(12)]
    outbox = OutboxStore(engine)
    outbox.add_many([new_row(LOCAL_DSN, LOCAL, event_envelope(e), ["error"], e["event_id"]) for e in events])
    assert InboxFeeder(outbox, inbox).feed_once() == len(events)
    Accounts(engine, from_env={}).add_user("ann", "maintainer", "ann-password")
    return engine, events


def test_everything_is_copied_and_the_target_keeps_working(tmp_path: Path, database_url: str) -> None:
    source, events = filled_sqlite(tmp_path / "source.db")
    target = db.engine(database_url)
    copied = copy(source, target)
    assert copied["inbox_event"] == 12 and copied["outbox"] == 12 and copied["inbox_issue"] == 3
    assert copied["inbox_read"] == 12 and copied["console_user"] == 1
    reader = InboxReader(target)
    assert reader.event(events[5]["event_id"])["event"] == events[5]  # still read from its envelope
    assert IssueSearch(target).search("").total == 3
    assert Accounts(target, from_env={}).authenticate("ann", "ann-password") == Viewer("ann", "maintainer")
    OutboxStore(target).add_many([new_row(LOCAL_DSN, LOCAL, b"{}\n", [], None)])  # ids go on past the copied ones
    with target.connect() as connection:
        assert connection.execute(sqlalchemy.text("select max(id) from outbox")).scalar() == 13
    with pytest.raises(CopyError, match="has rows already"):
        copy(source, target)


def test_the_command_line_prints_the_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    filled_sqlite(tmp_path / "a.db")
    assert main([f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"]) == 0
    assert "inbox_event\t12" in capsys.readouterr().out.splitlines()
    assert main([f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"]) == 2
