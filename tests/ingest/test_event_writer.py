"""The writer of issues and events: an event finds its issue through its grouping hash, also on an
install whose issues were stored before the hashes had a table of their own (migration 0015)."""

from __future__ import annotations

from pathlib import Path

from app import db
from app.ingest.store import InboxStore
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_DSN
from tests.factories import as_of_revision, error, event_envelope, query


def test_an_issue_stored_before_migration_0015_takes_its_new_events(tmp_path: Path) -> None:
    engine = db.engine(f"sqlite:///{tmp_path / 'before.db'}")
    inbox = InboxStore(engine)
    with as_of_revision(engine, "0014_sourcemap_uploads"):
        inbox.ensure_project(Dsn.parse(LOCAL_DSN))
        inbox.ingest_envelope(event_envelope(error("'cart'")))
        inbox.ingest_envelope(event_envelope(error("'basket'", kind="ValueError")))
    db.migrate(engine)
    inbox.ingest_envelope(event_envelope(error("'cart'")))
    assert query(inbox, "select title, event_count from inbox_issue order by id") == [
        ("KeyError: 'cart'", 2), ("ValueError: 'basket'", 1)]
    # Each event records the hash it was grouped by: its issue's, for those stored before.
    assert query(inbox, "select count(*) from inbox_event e join inbox_issue i on i.id = e.issue_id"
                        " where e.fingerprint = i.fingerprint") == [(3,)]
    assert query(inbox, "select count(*) from inbox_grouphash") == [(2,)]
