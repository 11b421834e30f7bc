"""Reading the modules a Vite dev server serves, and the source maps inline in them, within bounds
(`ModuleReader`): for Lookout's own dev server (app/sourcemaps/dev_modules.py) and for another app's
that a project lists.

A frame names only a path: the module is read from this app's own dev server
(`http://localhost:<frontend port>`, from Reflex's config), never from a host named in an event.
Another app's dev server is read only for a project that lists its origin (`ModuleReader`, asked by
app/sourcemaps/symbolicate.py; the option: app/projects/sourcemap_options.py), with the same bounds;
its Python pages are the ones its modules declare (app/sourcemaps/declared_pages.py).
Refused without a request: a URL or `//host/...`, a `.`/`..` segment, Vite's internal `/@...` paths,
anything not named like a JavaScript module, and an origin not on loopback (`off_loopback`: a dev
server runs on the developer's own machine; the options refuse any other, and a row stored before
that rule is refused here). Each read: a short deadline (`FETCH_DEADLINE_S`), at most
`MAX_MODULE_BYTES`, no redirects, no proxy from the environment, a JavaScript `Content-Type`.

Anyone with a project's DSN can name new paths on its dev servers, and ingest has one feeder, so a
read never holds the caller longer than its allowance: the request runs on one of the reader's few
threads and the caller waits for it at most the least of the fetch's deadline, what is left of the
event's wait (`event_wait`, set by the symbolicator for each event) and what is left of the origin's
(`ORIGIN_WAIT_S` of waiting per `WINDOW_S`, every event together). Past it the caller goes on
(`NotRead`, a sentence for the frame) and the request ends on its own deadline, its answer dropped.
An origin whose request timed out is not asked again for `BACKOFF_S`. Answers are not kept here: the
symbolicator's cache (app/sourcemaps/map_cache.py) keeps them by path, found or not (a path that
failed is not read again for its 30 s), so the frames of one event in one module read it once.

Vite names a dev map's sources relative to the module's own URL directory: `/app/routes/x.jsx`
maps `sources: ["x.jsx"]`.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import contextvars
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import unquote, unquote_to_bytes

import httpx

from app.projects.sourcemap_options import off_loopback
from app.sourcemaps.declared_pages import declared_pages
from app.sourcemaps.maps import StoredMap
from reflex_lookout.settings import MIB
from reflex_lookout.sourcemaps.pages import PageSource

log = logging.getLogger(__name__)

MAX_MODULE_BYTES = 8 * MIB
FETCH_DEADLINE_S = 2.0
ORIGIN_WAIT_S = 10.0  # of callers' waiting for one dev server, per WINDOW_S
WINDOW_S = 60.0
BACKOFF_S = 30.0  # an origin whose request timed out is not asked for so long
WORKERS = 4  # requests under way at once (a caller that stopped waiting leaves its request running)
MAX_PATH_CHARS = 2048
BUILD_ID = "dev"
MODULE_SUFFIXES = (".js", ".jsx", ".mjs", ".ts", ".tsx")
JS_TYPES = ("text/javascript", "application/javascript")
# One path segment as Vite serves this app's modules: `[try]._index.jsx`, `.vite`, `@radix-ui`.
_SEGMENT = re.compile(r"[A-Za-z0-9_.\-\[\]$~+@,=()!]+")
_MAP_COMMENTS = (b"//# sourceMappingURL=", b"//@ sourceMappingURL=")
# (monotonic time, seconds): until when the reads of the current event may wait, and how long it had.
_event_wait: contextvars.ContextVar[tuple[float, float] | None] = contextvars.ContextVar("dev_module_wait", default=None)


def module_path(asset_path: str) -> str | None:
    """The decoded URL path of a JavaScript module on the dev server, or None if `asset_path` names
    anything else (another host, a parent directory, Vite's internals). Query and fragment
    (`?t=...` after a hot update) are dropped."""
    if len(asset_path) > MAX_PATH_CHARS or not asset_path.startswith("/") or asset_path.startswith("//"):
        return None
    path = unquote(asset_path.split("?", 1)[0].split("#", 1)[0])
    segments = path[1:].split("/")
    if segments[0].startswith("@") or not path.endswith(MODULE_SUFFIXES):
        return None
    if any(segment in (".", "..") or not _SEGMENT.fullmatch(segment) for segment in segments):
        return None
    return path


def inline_map(module: bytes) -> bytes | None:
    """The source map a module carries in its last line as a `data:application/json` URL, or None."""
    body = module.rstrip()
    last = body[body.rfind(b"\n") + 1:]
    prefix = next((p for p in _MAP_COMMENTS if last.startswith(p)), None)
    if prefix is None:
        return None
    header, comma, payload = last[len(prefix):].partition(b",")
    params = header.split(b";")
    if not comma or params[0] != b"data:application/json":
        return None
    if b"base64" not in params[1:]:
        return unquote_to_bytes(payload)
    try:
        return base64.b64decode(payload, validate=True)
    except binascii.Error:
        return None


class NotRead(Exception):
    """A module not asked for, or not waited for, and why (a sentence for the frame). Unlike a read
    that found nothing, it is not remembered as missing: a later event may read the module."""


@dataclass
class _Origin:
    """One dev server's waiting: in the window that began at `window_start`, and whether it is skipped."""

    window_start: float
    waited_s: float = 0.0
    skip_until: float = 0.0


class _TimedOut(Exception):
    """The request itself ran past its deadline (not a caller that stopped waiting for it)."""


class ModuleReader:
    """Reads a module and its inline map from a dev server, within the bounds above; one HTTP client
    (no redirects, no proxy from the environment) for every origin it is asked about, and `workers`
    threads that make the requests. Safe to share between threads."""

    def __init__(
        self,
        *,
        max_bytes: int = MAX_MODULE_BYTES,
        deadline_s: float = FETCH_DEADLINE_S,
        origin_wait_s: float = ORIGIN_WAIT_S,
        window_s: float = WINDOW_S,
        backoff_s: float = BACKOFF_S,
        workers: int = WORKERS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_bytes, self._deadline_s, self._clock = max_bytes, deadline_s, clock
        self._origin_wait_s, self._window_s, self._backoff_s, self._workers = origin_wait_s, window_s, backoff_s, workers
        self._client = httpx.Client(follow_redirects=False, trust_env=False, timeout=deadline_s)
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="lookout-dev-modules")
        self._lock = threading.Lock()
        self._in_flight: dict[str, Future[bytes | None]] = {}  # by URL: a second caller waits for the same request
        self._origins: dict[str, _Origin] = {}

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)  # a request ends by its deadline
        self._client.close()

    def read(self, origin: str, asset_path: str,
             pages: Callable[[], Mapping[str, PageSource]] = dict) -> StoredMap | None:
        """The module at `asset_path` on the dev server at `origin`, with its map and Python pages
        (`pages()`, asked only once a map is found, and those the map's sources declare); None when
        the path names no module or the server gives none; NotRead when it was not asked, or not
        waited for."""
        path = module_path(asset_path)
        if path is None:
            return None
        origin = origin.rstrip("/")
        where = off_loopback(origin)
        if where is not None:
            raise NotRead(f"Not read: the dev server {origin} is {where}; dev servers are read on loopback only.")
        wait_s, limit = self._allowance(origin)
        request = self._request(origin, origin + path)
        started = time.monotonic()
        try:
            module = request.result(timeout=wait_s)
        except _TimedOut:
            self._skip(origin)
            raise NotRead(f"Not read: the dev server {origin} did not answer within {self._deadline_s:g} s; "
                          f"it is not asked again for {self._backoff_s:g} s.") from None
        except TimeoutError:  # the caller's wait is over; the request goes on to its own deadline
            if limit == "deadline":
                self._skip(origin)
            raise NotRead(self._gave_up(limit, origin, wait_s)) from None
        finally:
            self._waited(origin, time.monotonic() - started)
        sourcemap = inline_map(module) if module is not None else None
        if module is None or sourcemap is None:
            return None
        return StoredMap(debug_id="", asset_path=path, build_id=BUILD_ID, source=module, sourcemap=sourcemap,
                         pages={**declared_pages(sourcemap, path, BUILD_ID), **pages()})

    def _allowance(self, origin: str) -> tuple[float, str]:
        """How long this read may wait and what bounds it ("deadline", "event" or "origin"); NotRead
        when it may not wait at all."""
        now = self._clock()
        with self._lock:
            state = self._origins.setdefault(origin, _Origin(now))
            if now < state.skip_until:
                raise NotRead(f"Not read: the dev server {origin} did not answer in time lately; it is asked "
                              f"again in {math.ceil(state.skip_until - now)} s.")
            if now - state.window_start >= self._window_s:
                state.window_start, state.waited_s = now, 0.0
            origin_left = self._origin_wait_s - state.waited_s
        if origin_left <= 0:
            raise NotRead(f"Not read: ingest has waited {self._origin_wait_s:g} s for the dev server {origin} "
                          f"within {self._window_s:g} s, all it may.")
        event = _event_wait.get()
        event_left = math.inf if event is None else event[0] - time.monotonic()
        if event is not None and event_left <= 0:
            raise NotRead(f"Not read: this event has waited {event[1]:g} s for dev servers, all it may.")
        return min((self._deadline_s, "deadline"), (event_left, "event"), (origin_left, "origin"))

    def _gave_up(self, limit: str, origin: str, wait_s: float) -> str:
        """Why a caller stopped waiting for a read after `wait_s`: the bound it reached."""
        if limit == "event":
            return f"Not read: the dev server {origin} did not answer within what was left of this event's wait."
        if limit == "origin":
            return (f"Not read: the dev server {origin} did not answer within what was left of the "
                    f"{self._origin_wait_s:g} s ingest may wait for it per {self._window_s:g} s.")
        return (f"Not read: the dev server {origin} did not answer within {wait_s:g} s; it is not asked again "
                f"for {self._backoff_s:g} s.")

    def _request(self, origin: str, url: str) -> Future[bytes | None]:
        """The request for `url` under way, else a new one; NotRead when every thread is busy."""
        with self._lock:
            request = self._in_flight.get(url)
            if request is None:
                if len(self._in_flight) >= self._workers:
                    raise NotRead("Not read: as many requests to dev servers as may run at once "
                                  f"({self._workers}) are under way.")
                context = contextvars.copy_context()  # the caller's monitoring scope, not the process's
                request = self._in_flight[url] = self._pool.submit(context.run, self._fetch, url)
        request.add_done_callback(lambda done: self._done(origin, url, done))  # outside the lock: it may run at once
        return request

    def _done(self, origin: str, url: str, request: Future[bytes | None]) -> None:
        with self._lock:
            if self._in_flight.get(url) is request:
                del self._in_flight[url]
        if not request.cancelled() and isinstance(request.exception(), _TimedOut):
            self._skip(origin)

    def _skip(self, origin: str) -> None:
        now = self._clock()
        with self._lock:
            self._origins.setdefault(origin, _Origin(now)).skip_until = now + self._backoff_s

    def _waited(self, origin: str, seconds: float) -> None:
        with self._lock:
            self._origins[origin].waited_s += seconds

    def _fetch(self, url: str) -> bytes | None:
        """The module's bytes; None when the server gives none; _TimedOut past the deadline."""
        deadline = self._clock() + self._deadline_s
        try:
            with self._client.stream("GET", url) as answer:
                if answer.status_code != 200:
                    log.info("Dev module %s: the dev server answered %d (redirects are not followed).",
                             url, answer.status_code)
                    return None
                if answer.headers.get("content-type", "").split(";")[0].strip().lower() not in JS_TYPES:
                    log.info("Dev module %s is not JavaScript.", url)
                    return None
                body = bytearray()
                for chunk in answer.iter_bytes():
                    body += chunk
                    if len(body) > self._max_bytes:
                        self._too_big(url)
                        return None
                    if self._clock() > deadline:
                        raise _TimedOut
                return bytes(body)
        except httpx.TimeoutException:
            raise _TimedOut from None
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            log.info("Dev module %s: not read (%s).", url, type(exc).__name__)
            return None

    def _too_big(self, url: str) -> None:
        log.warning("Dev module %s is larger than %d bytes; left unmapped.", url, self._max_bytes)


@contextlib.contextmanager
def event_wait(seconds: float) -> Iterator[None]:
    """While it lasts, the reads of this thread (one event's symbolication) wait `seconds` in all."""
    token = _event_wait.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _event_wait.reset(token)
