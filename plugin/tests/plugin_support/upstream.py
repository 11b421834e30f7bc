"""A real HTTP server standing in for Sentry's ingestion endpoint in tests.

    with Upstream() as upstream:
        sentry_sdk.init(dsn=f"http://key@127.0.0.1:{upstream.port}/42")
        ...
        [envelope] = upstream.wait_for(1)

The server runs uvicorn + starlette on 127.0.0.1 in a background thread. It
records every request exactly as it arrived (the body is never decoded, even
when it carries `Content-Encoding: gzip`) and answers whatever the test asked
for: a fixed answer (`respond`), a one-shot sequence (`respond_sequence`), or a
delayed one (`hang`). `stop()` closes the port so connections are refused;
`start()` opens the same port again.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from dataclasses import dataclass
from types import TracebackType

import uvicorn
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

DEFAULT_BODY = b'{"id":"0"}'
HOST = "127.0.0.1"


@dataclass(frozen=True)
class Received:
    """One request, as it reached the server."""

    method: str
    path: str  # e.g. "/api/42/envelope/"
    query: str
    headers: dict[str, str]  # lower-cased names; a repeated header keeps its last value
    body: bytes  # exactly the bytes received, Content-Encoding untouched
    at: float  # time.monotonic() once the body had arrived


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


class Upstream:
    """A Sentry-like ingestion endpoint on 127.0.0.1, in a background thread (uvicorn + starlette)."""

    def __init__(self, port: int | None = None) -> None:
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._received: list[Received] = []
        self._accepted: list[Received] = []
        self._default = Answer(200, {}, DEFAULT_BODY)
        self._sequence: list[Answer] = []
        self._hang = 0.0
        self._stopping = threading.Event()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        # Bind now, so that the port is ours from the start (no race between
        # "find a free port" and "use it"); uvicorn closes it on stop(). An
        # instance that is never started should still be stopped.
        self._socket: socket.socket | None = self._bind(port or 0)
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}"

    # What arrived.

    @property
    def received(self) -> list[Received]:
        """Every request that reached the handler, whatever it was answered."""
        with self._lock:
            return list(self._received)

    @property
    def accepted(self) -> list[Received]:
        """The requests answered 2xx, while their client was still connected."""
        with self._lock:
            return list(self._accepted)

    def wait_for(self, count: int, timeout: float = 10) -> list[Received]:
        """Block until at least `count` requests were accepted; return them."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self._accepted) < count:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    arrived = "\n".join(
                        f"  {r.method} {r.path}{'?' + r.query if r.query else ''} ({len(r.body)} bytes)"
                        for r in self._received
                    )
                    raise AssertionError(
                        f"expected {count} accepted request(s) within {timeout}s, "
                        f"got {len(self._accepted)} accepted of {len(self._received)} received:\n"
                        f"{arrived or '  (nothing)'}"
                    )
                self._arrived.wait(remaining)
            return list(self._accepted)

    # How to answer.

    def respond(self, status: int = 200, headers: dict[str, str] | None = None, body: bytes = DEFAULT_BODY) -> None:
        """Every following request gets this answer."""
        with self._lock:
            self._default = Answer(status, dict(headers or {}), body)

    def respond_sequence(self, answers: list[tuple[int, dict[str, str]]]) -> None:
        """Answer the next requests with these, one each (body `{"id":"0"}`), then fall back to `respond()`."""
        with self._lock:
            self._sequence = [Answer(status, dict(headers), DEFAULT_BODY) for status, headers in answers]

    def hang(self, seconds: float) -> None:
        """Following requests wait this long before being answered (0 = off). `stop()` cuts the wait short."""
        with self._lock:
            self._hang = seconds

    # Life cycle.

    def start(self) -> None:
        """Serve in a background thread; return once the port accepts connections."""
        if self._thread is not None:
            raise RuntimeError("Upstream is already running")
        if self._socket is None:
            self._socket = self._bind(self.port)
        sock, self._socket = self._socket, None
        self._stopping.clear()
        config = uvicorn.Config(
            self._app,
            host=HOST,
            port=self.port,
            loop="asyncio",
            http="h11",
            # uvicorn's "auto" detection takes a bound coroutine method for ASGI2.
            interface="asgi3",
            lifespan="off",
            proxy_headers=False,
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name=f"upstream-{self.port}", daemon=True
        )
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                server.should_exit = True
                thread.join(5)
                sock.close()
                raise RuntimeError(f"Upstream on port {self.port} did not start")
            time.sleep(0.005)
        self._server, self._thread = server, thread

    def stop(self) -> None:
        """Stop serving; return once the port is closed (connections are refused afterwards)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            if self._socket is not None:  # reserved but never started
                self._socket.close()
                self._socket = None
            return
        self._stopping.set()
        server.should_exit = True
        thread.join()
        self._server = self._thread = None

    def __enter__(self) -> Upstream:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # Inside.

    @staticmethod
    def _bind(port: int) -> socket.socket:
        # proto=IPPROTO_TCP matters: asyncio sets TCP_NODELAY only on sockets that say they are TCP,
        # and without it every answer waits ~40 ms for the client's delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            sock.close()
            raise
        return sock

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI application: record, maybe wait, answer."""
        request = Request(scope, receive)
        body = await request.body()
        received = Received(
            method=request.method,
            path=request.url.path,
            query=scope["query_string"].decode("latin-1"),
            headers=dict(request.headers.items()),
            body=body,
            at=time.monotonic(),
        )
        with self._lock:
            self._received.append(received)
            answer = self._sequence.pop(0) if self._sequence else self._default
            hang = self._hang

        deadline = time.monotonic() + hang
        while time.monotonic() < deadline and not self._stopping.is_set():
            await asyncio.sleep(0.01)

        # A client that gave up while we hung never learns of our answer.
        # (Checked before answering: once the response is sent, uvicorn reports every client as gone.)
        delivered = not await request.is_disconnected()
        # Recorded before the answer is sent: a client that has its 2xx finds the request among
        # `accepted` (recorded after, a test that saw the forwarder delete the row could look before this
        # thread had appended it: seen once under load).
        if 200 <= answer.status < 300 and delivered:
            with self._arrived:
                self._accepted.append(received)
                self._arrived.notify_all()
        content = b"" if answer.status in (204, 304) else answer.body
        response = Response(content, answer.status, answer.headers, media_type="application/json")
        await response(scope, receive, send)
