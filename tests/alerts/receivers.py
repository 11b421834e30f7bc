"""Real receivers on loopback for the alert tests: a webhook (HTTP or HTTPS) server and an SMTP server.

Each serves from a background thread and is a context manager:

    with WebhookReceiver() as hook:
        ... post to hook.url() ...
        (got,) = hook.wait_for(1, timeout=10)      # Received(path, headers, body, at)

    with MailReceiver(starttls=certificate().server_context(), auth=("ann", "secret")) as mail:
        ... send to mail.host, mail.port ...
        (message,) = mail.wait_for(1, timeout=10)  # email.message.EmailMessage

`certificate()` (tests/alerts/certificates.py) makes a self-signed certificate for localhost and
127.0.0.1; its `client_context()` trusts it, and nothing else. `closed_port()` is a port where
connections are refused. aiosmtpd is a test-only dependency: app code never imports it.
"""

from __future__ import annotations

import email
import email.policy
import http.server
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

logging.getLogger("mail.log").setLevel(logging.ERROR)  # aiosmtpd's own deprecation notices on every login

HOST = "127.0.0.1"
MAX_BODY = 16 * 1024 * 1024  # a request body beyond this is cut (the receiver stays bounded too)
T = TypeVar("T")


def closed_port() -> int:
    """A loopback port nothing listens on (it was free a moment ago): connections are refused."""
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return int(probe.getsockname()[1])


# --- shared: a list that threads append to and tests wait on --------------------------------------


class _Log(Generic[T]):
    def __init__(self) -> None:
        self._items: list[T] = []
        self._changed = threading.Condition()

    def add(self, item: T) -> None:
        with self._changed:
            self._items.append(item)
            self._changed.notify_all()

    def items(self) -> list[T]:
        with self._changed:
            return list(self._items)

    def clear(self) -> None:
        with self._changed:
            self._items.clear()

    def wait_for(self, count: int, timeout: float, what: str) -> list[T]:
        """The first `count` items once there are that many; AssertionError with what came on timeout."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self._items) >= count, timeout):
                raise AssertionError(f"expected {count} {what} within {timeout} s, got {len(self._items)}: "
                                     f"{self._items!r}")
            return self._items[:count]


class _Receiver(Generic[T]):
    """What both receivers share: what came (`_log`), `clear()`, and closing as a context manager."""

    def __init__(self) -> None:
        self._log: _Log[T] = _Log()

    def clear(self) -> None:
        self._log.clear()

    def down(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.down()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()


# --- webhooks -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Received:
    """One request the webhook receiver got (whatever it answered)."""

    path: str  # with its query string
    headers: dict[str, str]  # names in lower case
    body: bytes
    at: float  # time.time() when it was read
    method: str = "POST"


@dataclass(frozen=True)
class _Answer:
    status: int = 200
    body: bytes = b"ok"
    delay_s: float = 0.0
    endless: bool = False


class WebhookReceiver(_Receiver[Received]):
    """An HTTP server on 127.0.0.1 (HTTPS with `tls`, a server context) recording every request.

    It answers `answer(...)` (200 b"ok" by default) to any path but `/redirect`, which answers 302 to
    `url("/hook")`. `down()` closes the listening socket (connections are refused); `up()` listens
    again on the same port.
    """

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        super().__init__()
        self._tls = tls
        self._answer = _Answer()
        self._released = threading.Event()  # set on close: delayed answers stop waiting
        self._server: http.server.ThreadingHTTPServer | None = None
        self.port = 0
        self.up()

    # -- what tests call

    @property
    def received(self) -> list[Received]:
        return self._log.items()

    def url(self, path: str = "/hook", host: str = HOST) -> str:
        return f"{'https' if self._tls else 'http'}://{host}:{self.port}{path}"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        return self._log.wait_for(count, timeout, "webhook requests")

    def answer(self, status: int, body: bytes = b"", delay_s: float = 0.0, endless: bool = False) -> None:
        """What the next requests get; `delay_s` holds the answer back (for the sender's timeouts);
        `endless`: `body` repeated (chunked) until the client hangs up, an answer no one can read whole."""
        self._answer = _Answer(status, body, delay_s, endless)

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def up(self) -> None:
        if self._server is not None:
            return
        self._released.clear()
        server = http.server.ThreadingHTTPServer((HOST, self.port), self._handler())
        if self._tls is not None:
            # Handshakes happen in the request's thread (on first read), not in the accepting one.
            server.socket = self._tls.wrap_socket(server.socket, server_side=True,
                                                  do_handshake_on_connect=False)
        self.port = int(server.server_address[1])
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=f"webhook-{self.port}",
                         daemon=True).start()
        self._server = server

    def close(self) -> None:
        self._released.set()
        super().close()

    # -- the request handler

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle_any(self) -> None:
                length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
                body = self.rfile.read(length) if length else b""
                receiver._log.add(Received(
                    path=self.path, headers={k.lower(): v for k, v in self.headers.items()}, body=body,
                    at=time.time(), method=self.command))
                if self.path.split("?", 1)[0] == "/redirect":
                    self._reply(302, b"", {"Location": receiver.url("/hook")})
                    return
                answer = receiver._answer
                if answer.delay_s:
                    receiver._released.wait(answer.delay_s)
                if answer.endless:
                    self._endless(answer.status, answer.body or b"x")
                else:
                    self._reply(answer.status, answer.body, {"Content-Type": "text/plain"})

            do_POST = do_GET = do_PUT = do_HEAD = handle_any

            def _reply(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _endless(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.close_connection = True
                while not receiver._released.is_set():  # until the client hangs up (a write fails) or close()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))

            def handle(self) -> None:
                try:
                    super().handle()
                except (OSError, ssl.SSLError):
                    pass  # the client went away (it stops reading a long answer): not the test's business

            def log_message(self, *_: object) -> None:
                pass

        return Handler


# --- e-mail ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MailEnvelope:
    """How one message came: its SMTP envelope, whether the connection was TLS, who logged in."""

    mail_from: str
    rcpt_tos: list[str]
    tls: bool
    user: str  # "" when no one logged in


class _Controller(Controller):
    """aiosmtpd's controller, listening on port 0 (a free one) and telling which it got."""

    def _trigger_server(self) -> None:
        assert self.server is not None
        self.port = int(self.server.sockets[0].getsockname()[1])
        super()._trigger_server()


class MailReceiver(_Receiver[tuple[EmailMessage, MailEnvelope]]):
    """An SMTP server (aiosmtpd) on 127.0.0.1 keeping every message it accepts.

    - `starttls`: a server context; STARTTLS is offered and required before MAIL.
    - `implicit_tls`: with `starttls`'s context, TLS from the first byte (smtps) instead.
    - `auth`: (user, password); AUTH LOGIN/PLAIN with them is required. Over a plain connection the
      server accepts AUTH too, so that a test can show the client refusing to send a password there.
    """

    def __init__(self, starttls: ssl.SSLContext | None = None, auth: tuple[str, str] | None = None,
                 implicit_tls: bool = False) -> None:
        super().__init__()
        self._tls = starttls
        self._auth = auth
        self._implicit = implicit_tls
        self.logins: list[str] = []  # the user of every AUTH attempt, good or bad
        self._controller: _Controller | None = None
        self.host = HOST
        self.port = 0
        self.up()

    @property
    def messages(self) -> list[EmailMessage]:
        return [message for message, _ in self._log.items()]

    @property
    def envelopes(self) -> list[MailEnvelope]:
        return [envelope for _, envelope in self._log.items()]

    def wait_for(self, count: int, timeout: float = 10.0) -> list[EmailMessage]:
        return [message for message, _ in self._log.wait_for(count, timeout, "e-mails")]

    def down(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def up(self) -> None:
        if self._controller is not None:
            return
        options: dict[str, Any] = {}
        if self._tls is not None and self._implicit:
            options.update(ssl_context=self._tls, auth_require_tls=False)  # TLS already
        elif self._tls is not None:
            options.update(tls_context=self._tls, require_starttls=True)
        else:
            options.update(auth_require_tls=False)
        if self._auth is not None:
            # Required by the handler at MAIL: aiosmtpd's auth_required warns when TLS is not required too.
            options.update(authenticator=self._authenticator(self._auth))
        handler = _Handler(self._log, login=self._auth is not None)
        controller = _Controller(handler, hostname=HOST, port=self.port, **options)
        controller.start()
        self.port = controller.port
        self._controller = controller

    def _authenticator(self, auth: tuple[str, str]) -> Callable[..., AuthResult]:
        user, password = auth[0].encode(), auth[1].encode()

        def check(server: SMTP, session: Session, envelope: Envelope, mechanism: str,
                  data: object) -> AuthResult:
            ok = isinstance(data, LoginPassword) and data.login == user and data.password == password
            self.logins.append(data.login.decode("utf-8", "replace") if isinstance(data, LoginPassword) else "?")
            # handled=False: aiosmtpd answers the failure itself (535), as a real server does.
            return AuthResult(success=ok, handled=False, auth_data=auth[0] if ok else None)

        return check


class _Handler:
    """aiosmtpd's handler: require a login before MAIL (with `login`), parse and keep each message."""

    def __init__(self, log: _Log[tuple[EmailMessage, MailEnvelope]], login: bool) -> None:
        self._log = log
        self._login = login

    async def handle_MAIL(self, server: SMTP, session: Session, envelope: Envelope, address: str,
                          options: list[str]) -> str:
        if self._login and not session.authenticated:
            return "530 5.7.0 Authentication required"
        envelope.mail_from = address
        envelope.mail_options.extend(options)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content or envelope.content or b""
        data = raw if isinstance(raw, bytes) else raw.encode()
        message = email.message_from_bytes(data, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self._log.add((message, MailEnvelope(
            mail_from=envelope.mail_from or "", rcpt_tos=list(envelope.rcpt_tos),
            tls=_is_tls(server, session),
            user=str(session.auth_data or "") if session.authenticated else "")))
        return "250 Message accepted for delivery"


def _is_tls(server: SMTP, session: Session) -> bool:
    """After STARTTLS (`session.ssl`) or TLS from the start (smtps: the transport's own)."""
    transport = server.transport
    return session.ssl is not None or (transport is not None and transport.get_extra_info("ssl_object") is not None)
