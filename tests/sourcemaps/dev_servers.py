"""Real HTTP servers on loopback for the dev-mode tests.

- `esbuild_serving`: esbuild's serve mode (`.tools/`, installed by `make setup`) with
  `--sourcemap=inline`, the shape Vite's dev server gives: a module whose last line is
  `//# sourceMappingURL=data:application/json;base64,...`, its lines moved by the JSX transform.
- `recording_server`: a stdlib server for what esbuild will not answer (redirects, wrong types,
  bodies without a length, answers late or never: `Route.delay_s`); it keeps every path it was asked
  for.
- `other_app_module`: another app's route module as its dev server serves it (JSX transformed by
  esbuild, the map inline), declaring its Python page (`OTHER_PAGE`), and a browser event thrown in it.
"""

from __future__ import annotations

import contextlib
import http.server
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reflex_lookout.sourcemaps.pages import PageSource, page_marker
from tests.sourcemaps.real_build import ESBUILD

OTHER_PAGE = PageSource(module="shop.shop", function="index", file="shop/shop.py", line=7)
OTHER_ROUTE = "/app/routes/_index.jsx"  # where the other app's dev server serves the module
OTHER_SOURCE = f"""{page_marker(OTHER_PAGE)}
/** @jsx h */
function h(tag, props, ...children) {{ return {{ tag, props, children }}; }}

export function Component() {{
  return <div id="x"><span>{{1}}</span></div>;
}}

export function otherAppThrowLater() {{
  throw new Error("other app: a browser error");
}}
"""
OTHER_THROW_LINE = 10  # of OTHER_SOURCE: the `throw`


@contextlib.contextmanager
def esbuild_serving(workdir: Path, entry: str, outdir: str, servedir: str) -> Iterator[str]:
    """esbuild building `entry` into `outdir` on request and serving `servedir`; yields its origin."""
    assert ESBUILD.exists(), f"{ESBUILD} is missing: `make setup` installs it"
    log = workdir / "esbuild.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [str(ESBUILD), entry, f"--outdir={outdir}", f"--servedir={servedir}", "--sourcemap=inline",
             "--serve=127.0.0.1:0"],
            cwd=workdir, stdin=subprocess.PIPE, stdout=out, stderr=out)  # it serves until stdin closes
    try:
        yield _origin_from(log, server)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _origin_from(log: Path, server: subprocess.Popen[bytes]) -> str:
    """The origin esbuild prints once it listens (` > Local: http://127.0.0.1:PORT/`)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and server.poll() is None:
        for line in log.read_text().splitlines():
            if "Local:" in line:
                return line.split("Local:", 1)[1].strip().rstrip("/")
        time.sleep(0.05)
    raise RuntimeError(f"esbuild did not start serving:\n{log.read_text()}")


@dataclass
class Route:
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/javascript"})
    body: bytes = b""
    length: bool = True  # False: no Content-Length, the body ends when the connection closes
    delay_s: float = 0.0  # before answering (the server's end cuts it short): a slow or stuck dev server


@dataclass
class Recorder:
    """What the recording server answers (`routes`; `other` for any other path) and every path it was
    asked for."""

    routes: dict[str, Route] = field(default_factory=dict)
    other: Route = field(default_factory=lambda: Route(status=404, body=b"not found"))
    paths: list[str] = field(default_factory=list)
    origin: str = ""
    ended: threading.Event = field(default_factory=threading.Event)  # set at the end: no answer waits any more


@contextlib.contextmanager
def recording_server() -> Iterator[Recorder]:
    recording = Recorder()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            recording.paths.append(self.path)
            route = recording.routes.get(self.path, recording.other)
            recording.ended.wait(route.delay_s)
            try:
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.length:
                    self.send_header("Content-Length", str(len(route.body)))
                else:
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(route.body)
            except ConnectionError:  # the reader stopped waiting and hung up
                self.close_connection = True

        def log_message(self, *_: object) -> None:
            pass

    serving = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recording.origin = f"http://127.0.0.1:{serving.server_address[1]}"
    threading.Thread(target=serving.serve_forever, daemon=True).start()
    try:
        yield recording
    finally:
        recording.ended.set()
        serving.shutdown()
        serving.server_close()


def other_app_module(workdir: Path) -> bytes:
    """OTHER_SOURCE as a Vite dev server serves it: the JSX transformed (lines moved, the page's
    comment gone from the code, kept in the map's sourcesContent), the map inline."""
    (workdir / "_index.jsx").write_text(OTHER_SOURCE)
    return subprocess.run([str(ESBUILD), "_index.jsx", "--sourcemap=inline", "--format=esm"], cwd=workdir,
                          capture_output=True, check=True).stdout


def other_app_event(module: bytes, origin: str) -> dict[str, object]:
    """A browser error thrown by `otherAppThrowLater` in `module` served at OTHER_ROUTE on `origin`,
    as the browser SDK reports it (Vite's `?import` on the URL)."""
    lines = module.decode().splitlines()
    line = next(number for number, text in enumerate(lines, 1) if "throw new Error" in text)
    url = f"{origin}{OTHER_ROUTE}?import"
    frame = {"filename": url, "abs_path": url, "function": "otherAppThrowLater", "lineno": line,
             "colno": lines[line - 1].index("throw") + 1, "in_app": True}
    return {"event_id": uuid.uuid4().hex, "platform": "javascript", "level": "error",
            "exception": {"values": [{"type": "Error", "value": "other app: a browser error",
                                      "stacktrace": {"frames": [frame]}}]}}
