"""Another app's dev-mode frames, mapped with the inline map of the module read from a dev server its
project lists, and only then: a real stdlib server on loopback serving a module esbuild transformed
(tests/sourcemaps/dev_servers.py), which records every path it is asked for."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from app.sourcemaps.dev_modules import inline_map
from app.sourcemaps.maps import StoredMap
from app.sourcemaps.symbolicate import Symbolicator
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
    return serving


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
    """The setting stores `origin_of`'s spelling; a frame's URL is compared in the same one."""
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
