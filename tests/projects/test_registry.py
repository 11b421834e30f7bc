"""Projects: the app's own, with a key random per install, and more added from the CLI, each with
its own DSN, its own issues."""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import sqlalchemy

from app import db
from app.inbox.reading import InboxReader
from app.inbox.search import IssueSearch
from app.ingest.feeder import InboxFeeder
from app.ingest.incoming import UnknownProject
from app.ingest.store import InboxStore
from app.projects import registry as module
from app.projects.options_store import ProjectOptionsStore
from app.projects.registry import Project, Projects, settle_local_dsn
from app.projects.sourcemap_options import SourceMapOptions
from app.settings import Settings
from plugin_support.envelopes import error_event
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import LOCAL, OutboxStore, new_row
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel
from tests.factories import as_of_revision, error, event_envelope


def test_an_added_project_gets_the_next_id_a_random_key_and_takes_its_events(inbox: InboxStore) -> None:
    added = Projects(inbox.engine).add("  Billing  ")
    assert (added.id, added.name, len(added.public_key)) == (2, "Billing", 32)
    assert Projects(inbox.engine).add("Search").public_key != added.public_key
    assert added.dsn("example.test:3000") == f"http://{added.public_key}@example.test:3000/2"
    event = error("'billing'")
    inbox.ingest_envelope(event_envelope(event, dsn=added.dsn("localhost")))
    reader = InboxReader(inbox.engine)
    assert reader.event(event["event_id"])["project_id"] == 2
    assert [i["project_id"] for i in IssueSearch(inbox.engine).search("", project=2).issues] == [2]
    assert IssueSearch(inbox.engine).search("", project=1).total == 0
    assert reader.facets()["project"] == ["1 · Lookout", "2 · Billing", "3 · Search"]
    with pytest.raises(UnknownProject):  # a DSN with the right id but another project's key
        inbox.ingest_envelope(event_envelope(error("x"), dsn=f"http://{added.public_key}@localhost/1"))
    with pytest.raises(ValueError, match="needs a name"):
        Projects(inbox.engine).add(" ")


def test_the_cli_adds_and_lists_projects(engine: sqlalchemy.Engine, capsys) -> None:
    assert module.main(["--host", "errors.example.test", "add", "Mobile"], engine) == 0
    [project] = Projects(engine).all()
    assert capsys.readouterr().out.strip() == Project(project.id, "Mobile", project.public_key).dsn("errors.example.test")
    assert module.main(["list"], engine) == 0
    assert capsys.readouterr().out.strip() == f"{project.id}\tMobile\thttp://{project.public_key}@localhost:3000/{project.id}"
    assert module.main(["add", ""], engine) == 2


def test_the_cli_gives_a_project_its_dev_servers(engine: sqlalchemy.Engine, capsys) -> None:
    added = ["add", "Shop (dev)", "--dev-server", "http://127.0.0.1:3000/", "--dev-server", "http://[::1]:3000"]
    assert module.main(added, engine) == 0
    [project] = Projects(engine).all()
    assert capsys.readouterr().out.strip() == project.dsn("localhost:3000")
    assert ProjectOptionsStore(engine).sourcemaps(project.id).dev_servers == ("http://127.0.0.1:3000", "http://[::1]:3000")
    assert module.main(["add", "Bad", "--dev-server", "http://127.0.0.1:3000/app"], engine) == 2  # made nothing
    assert "The dev server on line 1 ('http://127.0.0.1:3000/app') must be an origin" in capsys.readouterr().err
    assert [p.name for p in Projects(engine).all()] == ["Shop (dev)"]
    assert module.main(["dev-servers", str(project.id), "http://localhost:5173"], engine) == 0
    assert ProjectOptionsStore(engine).sourcemaps(project.id).dev_servers == ("http://localhost:5173",)
    assert module.main(["dev-servers", str(project.id)], engine) == 0  # none: it has none
    assert ProjectOptionsStore(engine).sourcemaps(project.id).dev_servers == ()
    assert module.main(["dev-servers", "99", "http://localhost:5173"], engine) == 2
    assert capsys.readouterr().err.strip() == "There is no project 99."


OFF_LOOPBACK = "a dev server must be on this machine, at localhost, 127.0.0.1 or [::1] (loopback)."


def test_a_dev_server_off_this_machine_is_refused_by_the_cli_and_the_options_store(
        engine: sqlalchemy.Engine, capsys) -> None:
    """Anyone with a project's DSN makes ingest ask its dev servers for paths: never another host's."""
    added = ["add", "Shop", "--dev-server", "http://127.0.0.1:3000", "--dev-server", "http://10.0.0.5:3000"]
    assert module.main(added, engine) == 2
    assert capsys.readouterr().err.strip() == (
        f"The dev server on line 2 ('http://10.0.0.5:3000') is on a private address: {OFF_LOOPBACK}")
    assert Projects(engine).all() == []  # made nothing
    project = Projects(engine).add("Shop")
    assert module.main(["dev-servers", str(project.id), "http://169.254.169.254"], engine) == 2
    assert capsys.readouterr().err.strip() == (
        f"The dev server on line 1 ('http://169.254.169.254') is on the cloud metadata address: {OFF_LOOPBACK}")
    store = ProjectOptionsStore(engine)  # the settings page's way (app/pages/project_settings_state.py)
    with pytest.raises(ValueError) as refused:
        store.set_sourcemaps(project.id, SourceMapOptions(("http://localhost:5173", "http://devbox.internal:5173")))
    assert str(refused.value) == (
        f"The dev server on line 2 ('http://devbox.internal:5173') is on a host other than localhost: {OFF_LOOPBACK}")
    assert store.sourcemaps(project.id) == SourceMapOptions()  # nothing stored
    assert module.main(["dev-servers", str(project.id), "http://localhost:5173", "http://[::1]:5173"], engine) == 0


OLD_DSN = "http://lookout@localhost/1"  # every install's local DSN before migration 0011: public


def test_each_install_gets_a_random_local_key_made_once(engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    other = db.engine(f"sqlite:///{tmp_path / 'other.db'}")
    db.migrate(other)
    first, second = Projects(engine).local_dsn(), Projects(other).local_dsn()
    assert first.public_key != second.public_key and "lookout" not in (first.public_key, second.public_key)
    assert re.fullmatch("[0-9a-f]{32}", first.public_key) and str(first) == f"http://{first.public_key}@localhost/1"
    assert Projects(engine).local_dsn() == first  # kept in the database: the same at every start
    assert [(p.id, p.name) for p in Projects(engine).all()] == [(1, "Lookout")]


def test_workers_starting_at_once_agree_on_one_key(engine: sqlalchemy.Engine) -> None:
    start = threading.Barrier(8)

    def start_worker() -> str:
        start.wait()
        return Projects(engine).local_dsn().public_key

    with ThreadPoolExecutor(8) as pool:
        keys = list(pool.map(lambda _: start_worker(), range(8)))
    assert len(set(keys)) == 1 and keys[0] == Projects(engine).all()[0].public_key


@pytest.mark.anyio
async def test_a_tunnel_on_a_fresh_database_refuses_the_old_public_key(engine: sqlalchemy.Engine) -> None:
    settings = Settings.from_env({})
    dsn = settle_local_dsn(settings, engine)
    inbox = InboxStore(engine)
    inbox.ensure_project(dsn)
    outbox = OutboxStore(engine)
    tunnel = Tunnel(settings, outbox, RateLimits(), TunnelStats())
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=tunnel.asgi()), base_url="http://lookout.test") as client:
            refused = await client.post(settings.tunnel_path, content=error_event(OLD_DSN))
            accepted = await client.post(settings.tunnel_path, content=error_event(str(dsn)))
    finally:
        await tunnel.writer.close()
    assert refused.status_code == 403 and "not one this tunnel forwards for" in refused.json()["detail"]
    assert accepted.status_code == 200
    assert InboxFeeder(outbox, inbox).feed_once() == 1 and IssueSearch(engine).search("").total == 1


def at_revision_0010_with_the_old_key(path: Path) -> tuple[sqlalchemy.Engine, dict]:
    """A database as an install made it before migration 0011: project 1 with the public key, one
    event read into it and one envelope still waiting for the inbox."""
    engine = db.engine(f"sqlite:///{path}")
    inbox, outbox = InboxStore(engine), OutboxStore(engine)
    read, waiting = error("'read before'"), error("'waiting'")
    with as_of_revision(engine, "0010_worker_lease"):
        inbox.ensure_project(Dsn.parse(OLD_DSN))
        outbox.add_many([new_row(OLD_DSN, LOCAL, event_envelope(read, dsn=OLD_DSN), ["error"], None)])
        assert InboxFeeder(outbox, inbox).feed_once() == 1
    outbox.add_many([new_row(OLD_DSN, LOCAL, event_envelope(waiting, dsn=OLD_DSN), ["error"], None)])
    return engine, waiting


def test_an_install_with_the_old_public_key_gets_a_random_one_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOOKOUT_LOCAL_DSN", raising=False)
    engine, waiting = at_revision_0010_with_the_old_key(tmp_path / "old.db")
    db.migrate(engine)
    [project] = Projects(engine).all()
    assert project.id == 1 and project.public_key != "lookout" and len(project.public_key) == 32
    assert settle_local_dsn(Settings.from_env({}), engine).public_key == project.public_key
    inbox = InboxStore(engine)
    assert InboxFeeder(OutboxStore(engine), inbox).feed_once() == 1  # the waiting envelope, under the new key
    assert InboxReader(engine).event(waiting["event_id"])["project_id"] == 1
    assert [i["title"] for i in IssueSearch(engine).search("").issues] == ["KeyError: 'waiting'", "KeyError: 'read before'"]
    with pytest.raises(UnknownProject):
        inbox.ingest_envelope(event_envelope(error("x"), dsn=OLD_DSN))


def test_a_configured_local_dsn_keeps_its_key_through_the_migration(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOKOUT_LOCAL_DSN", OLD_DSN)  # the operator chose it, key included
    engine, _ = at_revision_0010_with_the_old_key(tmp_path / "old.db")
    db.migrate(engine)
    assert [p.public_key for p in Projects(engine).all()] == ["lookout"]
