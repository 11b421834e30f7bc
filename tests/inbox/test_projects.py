"""Projects beyond the first: added from the CLI, each with its own DSN, its own issues."""

from __future__ import annotations

import sqlalchemy
import pytest

from app import db
from app.inbox import projects as module
from app.inbox.projects import Project, Projects
from app.inbox.store import InboxReader, InboxStore, UnknownProject
from tests.inbox.test_store import error, event_envelope


def test_an_added_project_gets_the_next_id_a_random_key_and_takes_its_events(inbox: InboxStore) -> None:
    added = Projects(inbox.engine).add("  Billing  ")
    assert (added.id, added.name, len(added.public_key)) == (2, "Billing", 32)
    assert Projects(inbox.engine).add("Search").public_key != added.public_key
    assert added.dsn("example.test:3000") == f"http://{added.public_key}@example.test:3000/2"
    event = error("'billing'")
    inbox.ingest_envelope(event_envelope(event, dsn=added.dsn("localhost")))
    reader = InboxReader(inbox.engine)
    assert reader.event(event["event_id"])["project_id"] == 2
    assert [i["project_id"] for i in reader.issues(project=2)[0]] == [2]
    assert reader.issues(project=1) == ([], 0)
    assert reader.facets()["project"] == ["1 · Lookout", "2 · Billing", "3 · Search"]
    with pytest.raises(UnknownProject):  # a DSN with the right id but another project's key
        inbox.ingest_envelope(event_envelope(error("x"), dsn=f"http://{added.public_key}@localhost/1"))
    with pytest.raises(ValueError, match="needs a name"):
        Projects(inbox.engine).add(" ")


def test_the_cli_adds_and_lists_projects(engine: sqlalchemy.Engine, monkeypatch, capsys) -> None:  # noqa: ANN001
    monkeypatch.setattr(db, "engine", lambda url=None: engine)
    assert module.main(["--host", "errors.example.test", "add", "Mobile"]) == 0
    [project] = Projects(engine).all()
    assert capsys.readouterr().out.strip() == Project(project.id, "Mobile", project.public_key).dsn("errors.example.test")
    assert module.main(["list"]) == 0
    assert capsys.readouterr().out.strip() == f"{project.id}\tMobile\thttp://{project.public_key}@localhost:3000/{project.id}"
    assert module.main(["add", ""]) == 2
