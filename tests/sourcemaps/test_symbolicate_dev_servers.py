"""Another app's dev-mode frames, mapped with the inline map of the module read from a dev server its
project lists, and only then: a real stdlib server on loopback serving a module esbuild transformed
(tests/sourcemaps/dev_servers.py), which records every path it is asked for.

What ingest waits for them: that server answering late or never, events naming new paths on it. The
wall time around the real symbolicator (and feeder) call is asserted against the bound the code
enforces, with SLACK_S for thread hand-offs on a shared machine: a bound, not a speed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app import db
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from app.projects.options_store import ProjectOptionsStore
from app.projects.registry import Projects
from app.projects.sourcemap_options import SourceMapOptions
from app.sourcemaps.dev_modules import DevModules, FirstFound
from app.sourcemaps.library import MapLibrary
from app.sourcemaps.maps import StoredMap
from app.sourcemaps.module_reader import ModuleReader, inline_map
from app.sourcemaps.symbolicate import Symbolicator
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import event_envelope, local_row
from tests.sourcemaps.dev_servers import (
    OTHER_PAGE,
    OTHER_ROUTE,
    OTHER_THROW_LINE,
    Recorder,
    Route,
    other_app_event,
    other_app_module,
    recording_server,
)
from tests.sourcemaps.reflex_like_build import PAGE, Maps

PROJECT = 2  # another app's project: no frame of it is matched by its path alone
SLACK_S = 0.5
STUCK = Route(status=404, delay_s=30)  # takes the connection, never answers (until the server's end)


@pytest.fixture(scope="module")
def module(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return other_app_module(tmp_path_factory.mktemp("other-app"))


@pytest.fixture(scope="module")
def serving(module: bytes) -> Iterator[Recorder]:
    with recording_server() as recording:
        recording.routes[OTHER_ROUTE] = Route(body=module)
        yield recording


@pytest.fixture
def server(serving: Recorder) -> Recorder:
    """The module's dev server, with no path asked for yet (a stop costs half a second: one per module)."""
    serving.paths.clear()
    serving.other = Route(status=404, body=b"not found")
    return serving


class Clock:
    """The reader's clock for its windows and pauses (a wait is real time)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def thrower(event: dict[str, Any]) -> dict[str, Any]:
    return event["exception"]["values"][0]["stacktrace"]["frames"][-1]


def symbolicated(event: dict[str, Any], dev_servers: tuple[str, ...]) -> bool:
    return Symbolicator(Maps()).symbolicate(event, by_path=False, project_id=PROJECT, dev_servers=dev_servers)


def test_a_frame_on_a_listed_dev_server_is_mapped_with_its_module_and_names_its_python_page(
        module: bytes, server: Recorder) -> None:
    event = other_app_event(module, server.origin)
    assert symbolicated(event, ("http://127.0.0.1:1", server.origin))
    frame = thrower(event)
    assert (frame["filename"], frame["abs_path"], frame["lineno"], frame["in_app"]) == (
        ".web/app/routes/_index.jsx", ".web/app/routes/_index.jsx", OTHER_THROW_LINE, True)
    assert frame["function"] == "otherAppThrowLater" and "throw new Error" in frame["context_line"]
    assert frame["data"] == {"sourcemap": {"debug_id": "", "build_id": "dev", "resolved_with": "asset_path"},
                             "python_page": OTHER_PAGE.to_json()}
    assert server.paths == [OTHER_ROUTE]  # Vite's `?import` is not sent: the module is the same


@pytest.mark.parametrize("listed", [(), ("http://127.0.0.1:1", "http://localhost:3000")])
def test_a_frame_on_an_origin_the_project_does_not_list_is_never_fetched(
        module: bytes, server: Recorder, listed: tuple[str, ...]) -> None:
    event = other_app_event(module, server.origin)
    sent = dict(thrower(event))
    assert symbolicated(event, listed)
    assert thrower(event) == {**sent, "data": {"sourcemap_error": "No source map: the event names no debug ID for this file."}}
    assert server.paths == []


def test_a_listed_dev_server_without_that_module_says_so(module: bytes, server: Recorder) -> None:
    event = other_app_event(module, server.origin)
    thrower(event)["abs_path"] = thrower(event)["filename"] = f"{server.origin}/app/routes/gone.jsx"
    assert symbolicated(event, (server.origin,))
    assert thrower(event)["data"]["sourcemap_error"] == (
        f"No source map: the dev server {server.origin} serves no module with an inline map at /app/routes/gone.jsx.")
    assert server.paths == ["/app/routes/gone.jsx"]


def test_the_origin_is_compared_in_one_spelling(module: bytes, server: Recorder) -> None:
    """The option stores `origin_of`'s spelling; a frame's URL is compared in the same one."""
    event = other_app_event(module, server.origin.replace("http://", "HTTP://"))
    assert symbolicated(event, (server.origin,))
    assert thrower(event)["filename"] == ".web/app/routes/_index.jsx"


def test_the_app_own_maps_come_first_for_its_own_events(module: bytes, server: Recorder) -> None:
    """Lookout's own project (matched by path: its builds, its dev server with its pages) listing a dev
    server too: what its own lookup finds wins, and the dev server is not asked."""
    own = StoredMap(debug_id="", asset_path=OTHER_ROUTE, build_id="dev", source=module, sourcemap=inline_map(module) or b"",
                    pages={".web/app/routes/_index.jsx": PAGE})
    event = other_app_event(module, server.origin)
    assert Symbolicator(Maps(own)).symbolicate(event, by_path=True, project_id=1, dev_servers=(server.origin,))
    assert thrower(event)["data"]["python_page"] == PAGE.to_json() and server.paths == []


# --- what ingest waits for a dev server ------------------------------------------------------------


def naming_new_paths(origin: str, tag: str, count: int) -> dict[str, Any]:
    """A browser error whose `count` frames each name a module no event named before (the innermost,
    tried first: `{tag}-0.js`)."""
    frames = [{"filename": f"{origin}/src/{tag}-{n}.js", "abs_path": f"{origin}/src/{tag}-{n}.js", "lineno": 1,
               "colno": 1} for n in reversed(range(count))]
    return {"platform": "javascript", "exception": {"values": [{"type": "Error", "stacktrace": {"frames": frames}}]}}


def errors(event: dict[str, Any]) -> list[str]:
    """Each frame's sentence, innermost (the first one tried) first."""
    return [f["data"]["sourcemap_error"] for f in reversed(event["exception"]["values"][0]["stacktrace"]["frames"])]


def timed(symbolicator: Symbolicator, event: dict[str, Any], origin: str) -> float:
    started = time.monotonic()
    assert symbolicator.symbolicate(event, by_path=False, project_id=PROJECT, dev_servers=(origin,))
    return time.monotonic() - started


def test_an_event_naming_new_paths_waits_for_a_stuck_dev_server_its_budget_at_most(server: Recorder) -> None:
    server.other = STUCK
    symbolicator = Symbolicator(Maps(), modules=ModuleReader(deadline_s=3.0), max_wait_ms=200)
    for tag in ("first", "second"):  # each event has a budget of its own
        event = naming_new_paths(server.origin, tag, 20)
        assert timed(symbolicator, event, server.origin) < 0.2 + SLACK_S
        first, *others = errors(event)
        assert first == f"Not read: the dev server {server.origin} did not answer within what was left of this event's wait."
        assert set(others) == {"Not read: this event has waited 0.2 s for dev servers, all it may."}
    assert server.paths == ["/src/first-0.js", "/src/second-0.js"]  # one request an event


def test_this_apps_own_dev_server_is_waited_for_within_the_event_budget_too(server: Recorder) -> None:
    """Lookout's own events in dev mode (their paths looked up in its builds, then on its dev server):
    the same budget; a second event naming the same module waits for the request under way."""
    server.other = STUCK
    lookup = FirstFound(Maps(), DevModules(server.origin, deadline_s=3.0))
    symbolicator = Symbolicator(lookup, max_wait_ms=200)
    for _ in range(2):
        event = naming_new_paths(server.origin, "own", 20)
        started = time.monotonic()
        assert symbolicator.symbolicate(event, by_path=True, project_id=1)
        assert time.monotonic() - started < 0.2 + SLACK_S
        first, *others = errors(event)
        assert first == f"Not read: the dev server {server.origin} did not answer within what was left of this event's wait."
        assert set(others) == {"Not read: this event has waited 0.2 s for dev servers, all it may."}
    assert server.paths == ["/src/own-0.js"]


def test_while_every_reader_thread_has_a_request_under_way_another_path_is_not_asked(server: Recorder) -> None:
    server.other = STUCK
    symbolicator = Symbolicator(Maps(), modules=ModuleReader(deadline_s=3.0, workers=1), max_wait_ms=100)
    timed(symbolicator, naming_new_paths(server.origin, "first", 1), server.origin)  # its request goes on
    event = naming_new_paths(server.origin, "second", 1)
    assert timed(symbolicator, event, server.origin) < SLACK_S
    assert errors(event) == ["Not read: as many requests to dev servers as may run at once (1) are under way."]
    assert server.paths == ["/src/first-0.js"]


def test_a_dev_server_that_timed_out_is_skipped_for_a_while_then_asked_again(server: Recorder) -> None:
    server.other = STUCK
    clock = Clock()
    symbolicator = Symbolicator(Maps(), modules=ModuleReader(deadline_s=0.3, backoff_s=60, clock=clock))
    event = naming_new_paths(server.origin, "first", 3)
    assert timed(symbolicator, event, server.origin) < 0.3 + SLACK_S
    assert errors(event) == [
        f"Not read: the dev server {server.origin} did not answer within 0.3 s; it is not asked again for 60 s.",
        *[f"Not read: the dev server {server.origin} did not answer in time lately; it is asked again in 60 s."] * 2]
    waited = sum(timed(symbolicator, naming_new_paths(server.origin, f"later{n}", 5), server.origin) for n in range(5))
    assert waited < SLACK_S and server.paths == ["/src/first-0.js"]  # neither the path nor any other asked again
    clock.now += 60
    server.other = Route(status=404)  # back, and answering
    event = naming_new_paths(server.origin, "back", 1)
    timed(symbolicator, event, server.origin)
    assert errors(event) == [
        f"No source map: the dev server {server.origin} serves no module with an inline map at /src/back-0.js."]
    assert server.paths == ["/src/first-0.js", "/src/back-0.js"]


def test_ingest_waits_for_one_dev_server_its_budget_per_window_at_most(server: Recorder) -> None:
    server.other = Route(status=404, delay_s=0.1)  # answers every path, late
    clock = Clock()
    symbolicator = Symbolicator(Maps(), modules=ModuleReader(origin_wait_s=0.35, window_s=60, clock=clock))
    events = [naming_new_paths(server.origin, f"event{n}", 1) for n in range(20)]
    assert sum(timed(symbolicator, event, server.origin) for event in events) < 0.35 + SLACK_S
    assert 1 <= len(server.paths) <= 4
    assert errors(events[-1]) == [
        f"Not read: ingest has waited 0.35 s for the dev server {server.origin} within 60 s, all it may."]
    clock.now += 60  # a new window
    timed(symbolicator, naming_new_paths(server.origin, "next-window", 1), server.origin)
    assert server.paths[-1] == "/src/next-window-0.js"


def test_a_path_that_failed_is_not_read_again_within_the_miss_window(server: Recorder) -> None:
    symbolicator = Symbolicator(Maps())
    for _ in range(5):
        event = naming_new_paths(server.origin, "gone", 1)
        timed(symbolicator, event, server.origin)
        assert errors(event) == [
            f"No source map: the dev server {server.origin} serves no module with an inline map at /src/gone-0.js."]
    assert server.paths == ["/src/gone-0.js"]  # remembered as missing (app/sourcemaps/map_cache.py), 30 s


def test_the_feeder_waits_for_a_stuck_dev_server_its_budget_per_event_at_most(server: Recorder, tmp_path: Path) -> None:
    """The project's option as stored, the real feeder over real outbox rows: five events naming
    twenty new paths each on a dev server that never answers."""
    server.other = STUCK
    engine = db.engine(f"sqlite:///{tmp_path / 'inbox.db'}")
    db.migrate(engine)
    inbox = InboxStore(engine, Symbolicator(MapLibrary(engine), modules=ModuleReader(deadline_s=3.0), max_wait_ms=200))
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    project = Projects(engine).add("shop (dev)")
    ProjectOptionsStore(engine).set_sourcemaps(project.id, SourceMapOptions(dev_servers=(server.origin,)))
    outbox = OutboxStore(engine)
    dsn = project.dsn("localhost")
    outbox.add_many([local_row(event_envelope(naming_new_paths(server.origin, f"e{n}", 20), dsn), dsn) for n in range(5)])
    started = time.monotonic()
    assert InboxFeeder(outbox, inbox).feed_once() == 5
    assert time.monotonic() - started < 5 * 0.2 + 2 * SLACK_S  # the writes too
    assert 1 <= len(server.paths) <= 5
