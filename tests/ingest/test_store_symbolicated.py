"""Browser events symbolicated at ingest, before grouping, on SQLite and PostgreSQL: real minified
builds (tests/sourcemaps/reflex_like_build.py), real envelopes, the real feeder and outbox."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import sqlalchemy

from app import db
from app.inbox.reading import InboxReader
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from app.presentation.stack import stack_rows
from app.projects.options_store import ProjectOptionsStore
from app.projects.registry import Projects
from app.projects.sourcemap_options import SourceMapOptions
from app.sourcemaps.library import MapLibrary, import_bundle
from app.sourcemaps.maps import StoredMap
from app.sourcemaps.own_build import SENTRY_CLI
from app.sourcemaps.symbolicate import Symbolicator
from app.sourcemaps.tokens import Tokens
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import LOCAL, OutboxStore
from reflex_lookout.sourcemaps.build_step import make_bundle
from tests.environment import LOCAL_DSN
from tests.factories import READ, as_of_revision, error, event_envelope, local_row, query, statuses
from tests.sourcemaps.artifact_zips import JsFile, uploaded
from tests.sourcemaps.big_maps import event_naming, frames_of, lines_map
from tests.sourcemaps.dev_servers import OTHER_PAGE, OTHER_ROUTE, Route, other_app_event, other_app_module, recording_server
from tests.sourcemaps.reflex_like_build import COMPONENTS, Build, Maps


def symbolicating(engine: sqlalchemy.Engine, *builds: Build) -> InboxStore:
    store = InboxStore(engine, Symbolicator(Maps(*(b.stored() for b in builds))))
    store.ensure_project(Dsn.parse(LOCAL_DSN))
    return store


def test_one_error_from_two_builds_is_one_issue_named_by_its_original_frame(
        engine: sqlalchemy.Engine, first_build: Build, second_build: Build) -> None:
    inbox = symbolicating(engine, first_build, second_build)
    for build in (first_build, second_build):
        assert inbox.ingest_envelope(event_envelope(build.event())).events == 1
    assert query(inbox, "select title, culprit, event_count from inbox_issue") == [
        ("Error: Lookout try: a render error", f"{COMPONENTS} in renderBomb", 2)]
    # as sent, the two builds' frames name other chunks and minified functions: two issues
    unmapped = InboxStore(engine)
    for build in (first_build, second_build):
        unmapped.ingest_envelope(event_envelope(build.event(value="as sent")))
    assert query(inbox, "select count(*) from inbox_issue where title = 'Error: as sent'") == [(2,)]


def test_an_anonymous_innermost_frame_is_named_by_its_python_page(engine: sqlalchemy.Engine, first_build: Build) -> None:
    inbox = symbolicating(engine, first_build)
    inbox.ingest_envelope(event_envelope(first_build.event("clicked", "Lookout try: an anonymous error")))
    assert query(inbox, "select culprit from inbox_issue") == [("app/pages/try_errors.py in page",)]


def test_a_symbolicated_event_is_kept_as_its_new_text_and_others_stay_in_their_envelope(
        engine: sqlalchemy.Engine, first_build: Build) -> None:
    inbox = symbolicating(engine, first_build)
    browser, server = first_build.event(), error("'user'")
    browser["event_id"] = "b" * 32
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(browser)), local_row(event_envelope(server))])
    assert InboxFeeder(outbox, inbox).feed_once() == 2
    assert statuses(engine) == [(READ, ""), (READ, "")]
    kept = query(inbox, "select event_id, payload <> '', envelope_id, item_index from inbox_event order by id")
    assert [row[1:] for row in kept] == [(True, None, None), (False, 2, 0)]
    stored = InboxReader(engine).event("b" * 32)["event"]
    exception = stored["exception"]["values"][0]
    assert exception["stacktrace"]["frames"][-1]["filename"] == COMPONENTS
    assert exception["raw_stacktrace"]["frames"] == browser["exception"]["values"][0]["stacktrace"]["frames"]
    assert InboxReader(engine).event(server["event_id"])["event"] == server  # untouched, read from its envelope


class AwayOnce(Maps):
    """The maps' database is away for the first lookup (a test seam, as tests/ingest/test_feeder.py's)."""

    def __init__(self, *stored: StoredMap) -> None:
        super().__init__(*stored)
        self.away = True

    def by_debug_id(self, debug_id: str, project_id: int = 1) -> StoredMap | None:
        if self.away:
            self.away = False
            raise sqlalchemy.exc.OperationalError("select ... from sourcemap_file", {}, Exception("connection refused"))
        return super().by_debug_id(debug_id, project_id)


def test_while_the_maps_cannot_be_read_the_batch_waits_and_nothing_is_lost(
        engine: sqlalchemy.Engine, first_build: Build) -> None:
    inbox = InboxStore(engine, Symbolicator(AwayOnce(first_build.stored())))
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(first_build.event()))])
    feeder = InboxFeeder(outbox, inbox)
    with pytest.raises(sqlalchemy.exc.OperationalError):
        feeder.feed_once()  # the running feeder logs it and tries again later (test_feeder.py)
    assert statuses(engine) == [(LOCAL, "")] and query(inbox, "select count(*) from inbox_event") == [(0,)]
    assert feeder.feed_once() == 1
    assert statuses(engine) == [(READ, "")]
    [(payload,)] = query(inbox, "select payload from inbox_event")
    assert json.loads(payload)["exception"]["values"][0]["stacktrace"]["frames"][-1]["filename"] == COMPONENTS


def test_events_stored_before_the_source_map_migration_stay_readable(tmp_path: Path, first_build: Build) -> None:
    """An install before migration 0012 (no source-map tables): its browser event, kept in its
    envelope, reads back as it was after the migration; the next one is symbolicated with the
    maps of a build imported afterwards (the real MapLibrary)."""
    engine = db.engine(f"sqlite:///{tmp_path / 'before.db'}")
    before = {**first_build.event(), "event_id": "b" * 32}
    outbox, old = OutboxStore(engine), InboxStore(engine)
    with as_of_revision(engine, "0011_random_local_key"):
        old.ensure_project(Dsn.parse(LOCAL_DSN))
        outbox.add_many([local_row(event_envelope(before))])
        assert InboxFeeder(outbox, old).feed_once() == 1

    assert db.migrate(engine) == db.head_revision()
    stored = InboxReader(engine).event(before["event_id"])
    assert stored["event"] == before  # the minified frames, as sent
    assert [row.kind for row in stack_rows(stored["event"])][:2] == ["exception", "frame"]
    static = tmp_path / "static"  # a copy: the build step moves the maps out of what it is given
    shutil.copytree(first_build.chunk.parent.parent, static)
    import_bundle(engine, make_bundle(static, tmp_path / "bundles", SENTRY_CLI, keep=20))
    inbox = InboxStore(engine, Symbolicator(MapLibrary(engine)))
    after = first_build.event()
    after["event_id"] = "a" * 32
    outbox.add_many([local_row(event_envelope(after))])
    assert InboxFeeder(outbox, inbox).feed_once() == 1
    mapped = InboxReader(engine).event("a" * 32)["event"]["exception"]["values"][0]["stacktrace"]["frames"]
    assert mapped[-1]["filename"] == COMPONENTS
    assert InboxReader(engine).event(before["event_id"])["event"] == before


def test_another_projects_events_are_mapped_with_the_maps_uploaded_for_that_project_only(
        engine: sqlalchemy.Engine, first_build: Build) -> None:
    """The real MapLibrary: the build's chunk and map uploaded with a token of project 2 (as
    sentry-cli does) map project 2's events by debug ID, and no other project's."""
    inbox = InboxStore(engine, Symbolicator(MapLibrary(engine)))
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    billing = Projects(engine).add("Billing")
    chunk = first_build.chunk
    uploaded(engine, Tokens(engine).add(billing.id)[0], JsFile(
        "~" + first_build.asset_path, chunk.read_bytes(), Path(f"{chunk}.map").read_bytes(), first_build.debug_id))
    for dsn, event_id in ((billing.dsn("localhost"), "c" * 32), (LOCAL_DSN, "d" * 32)):
        inbox.ingest_envelope(event_envelope({**first_build.event(), "event_id": event_id}, dsn))
    theirs = InboxReader(engine).event("c" * 32)["event"]["exception"]["values"][0]["stacktrace"]["frames"]
    assert theirs[-1]["filename"] == "app_components/app/pages/try_errors.jsx"  # named as another app's
    assert theirs[-1]["data"]["sourcemap"]["build_id"].startswith(f"upload-{billing.id}-")
    ours = InboxReader(engine).event("d" * 32)["event"]["exception"]["values"][0]["stacktrace"]["frames"]
    assert ours[-1]["data"] == {"sourcemap_error": f"No source map has the debug ID {first_build.debug_id}."}


def test_an_event_over_its_budget_is_stored_with_why_and_the_feeder_maps_the_next(engine: sqlalchemy.Engine) -> None:
    """A big uploaded map (~3 MB of many lines) named by a ~1 KB event: the event is stored with its
    frames as sent and why, after one cheap refusal, and the next event of the batch is mapped. Real
    uploads, the real MapLibrary and feeder, SQLite."""
    inbox = InboxStore(engine, Symbolicator(MapLibrary(engine), max_bytes=1024 * 1024))
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    billing = Projects(engine).add("Billing")
    big, normal = lines_map("big.js", 300_000), lines_map("normal.js", 100)
    uploaded(engine, Tokens(engine).add(billing.id)[0], big, normal)
    costly, next_one = event_naming((normal, 7), (big, 250_000)), event_naming((normal, 8))
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(event_envelope(e, billing.dsn("localhost")), billing.dsn("localhost"))
                     for e in (costly, next_one)])
    assert InboxFeeder(outbox, inbox).feed_once() == 2 and statuses(engine) == [(READ, ""), (READ, "")]
    stored = frames_of(InboxReader(engine).event(costly["event_id"])["event"])
    assert stored[-1]["abs_path"] == "app:///assets/big.js" and stored[-1]["lineno"] == 250_000  # as sent
    assert stored[-1]["data"]["sourcemap_error"].startswith(
        f"The source map of /assets/big.js is unreadable: it is {len(big.source) + len(big.sourcemap)} bytes with "
        "its file, more than the 1048576 bytes of maps an event may load (LOOKOUT_SYMBOLICATE_MAX_BYTES)")
    assert stored[0]["filename"] == "assets/src/normal.js"  # its other frame is mapped all the same
    mapped = frames_of(InboxReader(engine).event(next_one["event_id"])["event"])
    assert mapped[0]["filename"] == "assets/src/normal.js" and mapped[0]["lineno"] == 8


def test_another_app_in_dev_mode_is_mapped_only_for_the_project_that_lists_its_dev_server(
        engine: sqlalchemy.Engine, tmp_path: Path) -> None:
    """The project's option, as its settings page stores it, reaches symbolication; a project without
    it maps nothing new, and its event makes no request. A real dev server on loopback."""
    inbox = InboxStore(engine, Symbolicator(MapLibrary(engine)))
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    listing, other = Projects(engine).add("shop (dev)"), Projects(engine).add("shop (no option)")
    module = other_app_module(tmp_path)
    with recording_server() as server:
        server.routes[OTHER_ROUTE] = Route(body=module)
        ProjectOptionsStore(engine).set_sourcemaps(listing.id, SourceMapOptions(dev_servers=(server.origin + "/",)))
        mapped, unmapped = other_app_event(module, server.origin), other_app_event(module, server.origin)
        inbox.ingest_envelope(event_envelope(unmapped, other.dsn("localhost")))
        assert server.paths == []
        inbox.ingest_envelope(event_envelope(mapped, listing.dsn("localhost")))
        assert server.paths == [OTHER_ROUTE]
    thrower = frames_of(InboxReader(engine).event(mapped["event_id"])["event"])[-1]
    assert (thrower["filename"], thrower["data"]["python_page"]) == (".web/app/routes/_index.jsx", OTHER_PAGE.to_json())
    assert query(inbox, f"select culprit from inbox_issue where project_id = {listing.id}") == [
        (".web/app/routes/_index.jsx in otherAppThrowLater",)]  # grouped by the original frame
    kept = frames_of(InboxReader(engine).event(unmapped["event_id"])["event"])[-1]
    assert kept["abs_path"] == f"{server.origin}{OTHER_ROUTE}?import" and "sourcemap" not in kept["data"]
