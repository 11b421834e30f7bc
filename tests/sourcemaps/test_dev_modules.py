"""Dev-mode maps read from real dev servers on loopback (tests/sourcemaps/dev_servers.py): esbuild
serving a JSX module with its map inline, as Vite's dev server does, and a recording stdlib server."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator

import httpx
import pytest
from symbolic.sourcemapcache import SourceMapCache

from app.projects.sourcemap_options import off_loopback
from app.sourcemaps.dev_modules import DevModules, FirstFound, with_dev_server
from app.sourcemaps.maps import StoredMap
from app.sourcemaps.module_reader import ModuleReader, NotRead, inline_map, module_path
from reflex_lookout.sourcemaps.pages import PageSource
from tests.sourcemaps.dev_servers import Recorder, Route, esbuild_serving, recording_server

ROUTE = "[try]._index"
# A page as Reflex generates one, JSX included, so the served module's lines differ from these.
ROUTE_JSX = """/** @jsxRuntime classic */
/** @jsx h */
function h(tag, props, ...children) { return { tag, props, children }; }

export function Component() {
  const items = [1, 2, 3];
  return (
    <div id="x">
      {items.map((n) => <span key={n}>{n}</span>)}
    </div>
  );
}

export function explode() {
  throw new Error("boom");
}
"""
PAGE = PageSource(module="app.pages.try_errors", function="page", file="app/pages/try_errors.py", line=12)


@pytest.fixture(scope="module")
def esbuild(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Serving `/app/routes/[try]._index.js` (built from ROUTE_JSX, map inline), `/static/nomap.js`
    (a plain file) and `/static/notes.txt`; yields the origin."""
    work = tmp_path_factory.mktemp("esbuild")
    (work / "src").mkdir()
    (work / "src" / f"{ROUTE}.jsx").write_text(ROUTE_JSX)
    (work / "www" / "static").mkdir(parents=True)
    (work / "www" / "static" / "nomap.js").write_text("export const a = 1;\n")
    (work / "www" / "static" / "notes.txt").write_text("//# sourceMappingURL=data:application/json;base64,e30=\n")
    with esbuild_serving(work, f"src/{ROUTE}.jsx", outdir="www/app/routes", servedir="www") as origin:
        yield origin


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    with recording_server() as recording:
        yield recording


def served_route(origin: str) -> bytes:
    return httpx.get(f"{origin}/app/routes/{ROUTE}.js", trust_env=False).content


def module_with_map(code: str = "export const f = () => 1;\n") -> bytes:
    """A tiny module with an inline map (any map: these tests are about reading it, not using it)."""
    sourcemap = base64.b64encode(b'{"version":3,"sources":["f.js"],"names":[],"mappings":"AAAA"}')
    return code.encode() + b"//# sourceMappingURL=data:application/json;base64," + sourcemap + b"\n"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# --- reading a module and its map from the dev server -------------------------------------------


def test_a_module_path_gives_its_inline_map_and_a_real_position_maps_to_the_original_line(esbuild: str) -> None:
    found = DevModules(esbuild, lambda: {f"app/routes/{ROUTE}.jsx": PAGE}).by_asset_path(f"/app/routes/{ROUTE}.js")

    assert found is not None
    assert (found.debug_id, found.asset_path, found.build_id) == ("", f"/app/routes/{ROUTE}.js", "dev")
    assert found.source == served_route(esbuild)
    assert found.pages == {f"app/routes/{ROUTE}.jsx": PAGE}
    served = found.source.decode().split("\n")
    line = next(n for n, text in enumerate(served, 1) if 'throw new Error("boom")' in text)
    original = next(n for n, text in enumerate(ROUTE_JSX.split("\n"), 1) if 'throw new Error("boom")' in text)
    assert line != original  # the transform moved it: only the map can say where it was
    token = SourceMapCache.from_bytes(found.source, found.sourcemap).lookup(line, served[line - 1].index("throw") + 1, 1)
    assert (token.line, token.function_name) == (original, "explode")
    assert token.context_line == '  throw new Error("boom");\n'


def test_a_path_as_a_browser_names_it_percent_encoded_with_a_query_is_the_same_module(esbuild: str) -> None:
    found = DevModules(esbuild).by_asset_path("/app/routes/%5Btry%5D._index.js?t=1732000000")

    assert found is not None and found.source == served_route(esbuild)
    assert found.asset_path == f"/app/routes/{ROUTE}.js"


@pytest.mark.parametrize("path", ["/static/nomap.js", "/app/routes/missing.js", "/static/notes.txt"])
def test_no_map_without_an_inline_map_or_a_javascript_module(esbuild: str, path: str) -> None:
    assert DevModules(esbuild).by_asset_path(path) is None


def test_a_response_that_is_not_javascript_gives_no_map(recorder: Recorder) -> None:
    recorder.routes["/page.js"] = Route(headers={"Content-Type": "text/html"}, body=module_with_map())
    recorder.routes["/module.js"] = Route(body=module_with_map())
    lookup = DevModules(recorder.origin)

    assert lookup.by_asset_path("/page.js") is None
    assert lookup.by_asset_path("/module.js") is not None


def test_a_module_over_the_size_cap_gives_no_map_and_a_log(esbuild: str, caplog: pytest.LogCaptureFixture) -> None:
    size = len(served_route(esbuild))
    path = f"/app/routes/{ROUTE}.js"

    assert DevModules(esbuild, max_bytes=size).by_asset_path(path) is not None
    with caplog.at_level(logging.WARNING, logger="app.sourcemaps.dev_modules"):
        assert DevModules(esbuild, max_bytes=size - 1).by_asset_path(path) is None
    assert f"larger than {size - 1} bytes" in caplog.text


def test_a_module_without_a_length_is_cut_at_the_size_cap(recorder: Recorder, caplog: pytest.LogCaptureFixture) -> None:
    body = module_with_map("export const pad = '" + "x" * 100_000 + "';\n")
    recorder.routes["/big.js"] = Route(body=body, length=False)

    assert DevModules(recorder.origin, max_bytes=len(body)).by_asset_path("/big.js") is not None
    with caplog.at_level(logging.WARNING, logger="app.sourcemaps.dev_modules"):
        assert DevModules(recorder.origin, max_bytes=len(body) - 1).by_asset_path("/big.js") is None
    assert "larger than" in caplog.text


def test_a_redirect_is_not_followed(recorder: Recorder) -> None:
    recorder.routes["/moved.js"] = Route(status=302, headers={"Location": "/module.js"})
    recorder.routes["/module.js"] = Route(body=module_with_map())

    assert DevModules(recorder.origin).by_asset_path("/moved.js") is None
    assert recorder.paths == ["/moved.js"]


@pytest.mark.parametrize("named", ["http://{host}/module.js", "//{host}/module.js", "https://{host}/module.js"])
def test_a_host_named_by_the_event_is_never_asked(esbuild: str, recorder: Recorder, named: str) -> None:
    recorder.routes["/module.js"] = Route(body=module_with_map())
    host = recorder.origin.removeprefix("http://")

    assert DevModules(esbuild).by_asset_path(named.format(host=host)) is None
    assert recorder.paths == []
    assert DevModules(recorder.origin).by_asset_path("/module.js") is not None  # the server does answer its own
    assert recorder.paths == ["/module.js"]


def test_each_lookup_reads_the_module_again(recorder: Recorder) -> None:
    """Answers are kept by the symbolicator's cache (app/sourcemaps/map_cache.py), not here."""
    recorder.routes["/module.js"] = Route(body=module_with_map())
    lookup = DevModules(recorder.origin)
    assert lookup.by_asset_path("/module.js") is not None
    assert lookup.by_asset_path("/module.js?t=2") is not None
    assert lookup.by_asset_path("/absent.js") is None
    assert recorder.paths == ["/module.js", "/module.js", "/absent.js"]


def test_a_dev_server_that_is_down_gives_no_map() -> None:
    assert DevModules("http://127.0.0.1:1").by_asset_path("/module.js") is None  # nothing listens on port 1


def test_pages_are_listed_once_and_a_failure_to_list_them_leaves_them_empty(recorder: Recorder,
                                                                            caplog: pytest.LogCaptureFixture) -> None:
    recorder.routes["/a.js"] = Route(body=module_with_map())
    recorder.routes["/b.js"] = Route(body=module_with_map())
    calls: list[int] = []

    def pages() -> dict[str, PageSource]:
        calls.append(1)
        return {"a.jsx": PAGE}

    lookup = DevModules(recorder.origin, pages)
    assert lookup.by_asset_path("/a.js").pages == lookup.by_asset_path("/b.js").pages == {"a.jsx": PAGE}
    assert len(calls) == 1

    def broken() -> dict[str, PageSource]:
        raise RuntimeError("no app")

    with caplog.at_level(logging.ERROR, logger="app.sourcemaps.dev_modules"):
        found = DevModules(recorder.origin, broken).by_asset_path("/a.js")
    assert found is not None and found.pages == {}
    assert "could not be listed" in caplog.text


def test_dev_modules_carry_no_debug_id(recorder: Recorder) -> None:
    assert DevModules(recorder.origin).by_debug_id("6e0e8a8c-0b4c-4a4e-9d7d-1c2b3a4d5e6f") is None
    assert recorder.paths == []


# --- which paths are asked for -------------------------------------------------------------------


@pytest.mark.parametrize("path, wanted", [
    ("/app/routes/[try]._index.jsx", "/app/routes/[try]._index.jsx"),
    ("/app/routes/%5Btry%5D.%5Bslow%5D._index.jsx?t=17#x", "/app/routes/[try].[slow]._index.jsx"),
    ("/node_modules/.vite/deps/react.js?v=1a2b", "/node_modules/.vite/deps/react.js"),
    ("/utils/state.js", "/utils/state.js"),
    ("/app/../../etc/passwd.js", None),
    ("/app/%2e%2e/secret.js", None),
    ("/app/./x.js", None),
    ("/@fs/etc/x.js", None),
    ("/@vite/client", None),
    ("/@id/__x00__virtual:react-router/hmr-runtime.js", None),
    ("/env.json", None),
    ("/app/x.js%3Fraw", None),
    ("//evil.example/x.js", None),
    ("http://evil.example/x.js", None),
    ("app/x.js", None),
    ("/app/x y.js", None),
    ("/" + "a" * 3000 + ".js", None),
])
def test_module_path(path: str, wanted: str | None) -> None:
    assert module_path(path) == wanted


# --- the inline map --------------------------------------------------------------------------------


MAP = b'{"version":3,"sources":["a.js"],"names":[],"mappings":"AAAA"}'


@pytest.mark.parametrize("module, wanted", [
    (b"x;\n//# sourceMappingURL=data:application/json;base64," + base64.b64encode(MAP) + b"\n", MAP),
    (b"x;\n//# sourceMappingURL=data:application/json;charset=utf-8;base64," + base64.b64encode(MAP), MAP),
    (b"x;\n//@ sourceMappingURL=data:application/json;base64," + base64.b64encode(MAP) + b"\n\n", MAP),
    (b"x;\n//# sourceMappingURL=data:application/json,%7B%22version%22%3A3%7D\n", b'{"version":3}'),
    (b"x;\n//# sourceMappingURL=x.js.map\n", None),
    (b"x;\n//# sourceMappingURL=data:text/plain;base64," + base64.b64encode(MAP) + b"\n", None),
    (b"x;\n//# sourceMappingURL=data:application/json;base64,not*base64\n", None),
    (b"//# sourceMappingURL=data:application/json;base64," + base64.b64encode(MAP) + b"\nx;\n", None),
    (b"x;\n", None),
    (b"", None),
])
def test_inline_map(module: bytes, wanted: bytes | None) -> None:
    assert inline_map(module) == wanted


# --- composing lookups -----------------------------------------------------------------------------


class Shelf:
    """A lookup over maps held in memory."""

    def __init__(self, *maps: StoredMap) -> None:
        self.maps = maps

    def by_debug_id(self, debug_id: str, project_id: int = 1) -> StoredMap | None:
        return next((m for m in self.maps if m.debug_id == debug_id), None)

    def by_asset_path(self, asset_path: str) -> StoredMap | None:
        return next((m for m in self.maps if m.asset_path == asset_path), None)


def stored(debug_id: str, path: str, build: str) -> StoredMap:
    return StoredMap(debug_id=debug_id, asset_path=path, build_id=build, source=b"", sourcemap=b"{}")


def test_first_found_asks_in_order_and_the_first_map_wins() -> None:
    library = Shelf(stored("d1", "/assets/a.js", "build-1"))
    dev = Shelf(stored("d1", "/assets/a.js", "dev"), stored("d2", "/app/b.jsx", "dev"))
    both = FirstFound(library, dev)

    assert both.by_asset_path("/assets/a.js").build_id == "build-1"
    assert both.by_debug_id("d1").build_id == "build-1"
    assert both.by_asset_path("/app/b.jsx").build_id == "dev"
    assert both.by_debug_id("d2").build_id == "dev"
    assert both.by_asset_path("/app/none.jsx") is None and both.by_debug_id("d3") is None


@pytest.mark.parametrize("mode", ["prod", "preview"])
def test_outside_dev_mode_only_the_library_is_asked(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    from app.app import app

    monkeypatch.setenv("REFLEX_ENV_MODE", mode)
    library = Shelf()

    assert with_dev_server(library, app) is library


def test_in_dev_mode_the_library_comes_first_then_this_apps_dev_server_with_its_pages(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from app.app import app

    monkeypatch.setenv("REFLEX_ENV_MODE", "dev")
    library = Shelf()

    lookup = with_dev_server(library, app)

    assert isinstance(lookup, FirstFound)
    first, dev = lookup.lookups
    assert first is library
    assert isinstance(dev, DevModules) and dev.origin.startswith("http://localhost:")
    page = dev.pages()[".web/app/routes/[try]._index.jsx"]
    assert (page.module, page.function, page.file) == ("app.pages.try_errors", "page", "app/pages/try_errors.py")


# --- where a dev server may be ---------------------------------------------------------------------


@pytest.mark.parametrize(("origin", "where"), [
    ("http://localhost:3000", None),
    ("http://127.0.0.1:3000", None),
    ("http://127.3.2.1", None),
    ("http://[::1]:5173", None),
    ("http://[::ffff:127.0.0.1]:5173", None),
    ("http://10.0.0.5:3000", "on a private address"),
    ("http://192.168.1.20:5173", "on a private address"),
    ("http://169.254.169.254", "on the cloud metadata address"),
    ("http://0.0.0.0:3000", "on an unspecified address"),
    ("http://[fd00::1]:3000", "on a unique-local address"),
    ("http://[64:ff9b::7f00:1]:3000", "on an IPv6 address that is not loopback"),  # NAT64: sent to a gateway
    ("http://93.184.216.34", "on a public address"),
    ("http://devbox.internal:3000", "on a host other than localhost"),
    ("http://localhost.example.com", "on a host other than localhost"),
])
def test_off_loopback(origin: str, where: str | None) -> None:
    assert off_loopback(origin) == where


def test_an_origin_off_loopback_is_never_asked(recorder: Recorder) -> None:
    """A project's row stored before dev servers were held to loopback: refused when read, without a
    request (0.0.0.0 would reach this machine's server: it is not a loopback address all the same)."""
    recorder.routes["/module.js"] = Route(body=module_with_map())
    origin = recorder.origin.replace("127.0.0.1", "0.0.0.0")
    with pytest.raises(NotRead) as refused:
        ModuleReader().read(origin, "/module.js")
    assert str(refused.value) == (
        f"Not read: the dev server {origin} is on an unspecified address; dev servers are read on loopback only.")
    assert recorder.paths == []
