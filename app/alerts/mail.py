"""E-mail over SMTP: the server from LOOKOUT_SMTP_URL, and one blocking send (callers run it in a thread).

    smtp://user:password@host:port    STARTTLS whenever the server offers it (port 25 by default)
    smtps://user:password@host:port   TLS from the first byte (port 465 by default)

A password is only ever sent over TLS: a server that offers no STARTTLS gets no login, and the send
fails with a sentence saying so. Every failure (refused, timed out, TLS, an SMTP error) comes back as
a `Delivered` whose error carries at most ERROR_BYTES of the server's reply.
"""

from __future__ import annotations

import smtplib
import socket
import ssl
from dataclasses import dataclass, field
from email.message import EmailMessage
from urllib.parse import unquote, urlsplit

from app.alerts.alert import Delivered, cut_error

MAX_URL = 2048
PORTS = {"smtp": 25, "smtps": 465}


@dataclass(frozen=True)
class SmtpServer:
    host: str
    port: int
    user: str = ""
    password: str = field(default="", repr=False)  # never in a log line
    implicit_tls: bool = False

    @classmethod
    def from_url(cls, url: str) -> SmtpServer:
        """`smtp://user:password@host:port` or `smtps://...`, user and password percent-decoded;
        ValueError (a sentence that never repeats the password) for anything else."""
        if len(url) > MAX_URL:
            raise ValueError(f"The SMTP URL is longer than {MAX_URL} characters.")
        parts = urlsplit(url.strip())
        if parts.scheme not in PORTS:
            raise ValueError("The SMTP URL must start with smtp:// (STARTTLS when offered) or smtps:// (TLS).")
        if not parts.hostname:
            raise ValueError("The SMTP URL has no host (smtp://user:password@host:port).")
        if parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError("The SMTP URL takes no path, query or fragment after host:port.")
        try:
            port = parts.port or PORTS[parts.scheme]
        except ValueError:
            raise ValueError("The SMTP URL's port is not a number between 1 and 65535.") from None
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        if password and not user:
            raise ValueError("The SMTP URL has a password but no user name.")
        return cls(parts.hostname, port, user, password, implicit_tls=parts.scheme == "smtps")

    @property
    def address(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def send(server: SmtpServer, message: EmailMessage, timeout_s: float = 10.0,
         context: ssl.SSLContext | None = None) -> Delivered:
    """Send `message` through `server`; never raises. Blocking: each step may take `timeout_s`.
    `context`: the certificates trusted (default: the system's)."""
    context = context or ssl.create_default_context()
    where = f"The SMTP server at {server.address}"
    try:
        with _connect(server, timeout_s, context) as client:
            tls = server.implicit_tls
            client.ehlo()
            if not tls and client.has_extn("starttls"):
                client.starttls(context=context)
                client.ehlo()
                tls = True
            if server.user:
                if not tls:
                    return Delivered(ok=False, error=f"{where} does not offer STARTTLS, so the password was not "
                                                     "sent; use smtps:// or a server that offers STARTTLS.")
                client.login(server.user, server.password)
            refused = client.send_message(message)
    except smtplib.SMTPAuthenticationError as error:
        return _failed(f"{where} refused the login of {server.user!r}: {_reply(error)}.")
    except smtplib.SMTPRecipientsRefused as error:
        return _failed(f"{where} refused every recipient: {_refusals(error.recipients)}.")
    except smtplib.SMTPResponseException as error:
        return _failed(f"{where} answered {_reply(error)}.")
    except smtplib.SMTPServerDisconnected as error:
        if isinstance(error.__context__, TimeoutError):  # smtplib turns a read's timeout into this
            return _failed(f"{where} did not answer within {timeout_s:g} s.")
        return _failed(f"{where} closed the connection ({error or 'without a word'}).")
    except TimeoutError:
        return _failed(f"{where} did not answer within {timeout_s:g} s.")
    except ssl.SSLError as error:
        return _failed(f"TLS with the SMTP server at {server.address} failed: {error}.")
    except ConnectionRefusedError:
        return _failed(f"{where} refused the connection.")
    except OSError as error:
        return _failed(f"{where} could not be reached: {type(error).__name__}: {error}.")
    except smtplib.SMTPException as error:  # e.g. no AUTH offered
        return _failed(f"{where} could not take the message: {error}.")
    if refused:
        return _failed(f"{where} refused some recipients: {_refusals(refused)}.")
    return Delivered(ok=True)


def _connect(server: SmtpServer, timeout_s: float, context: ssl.SSLContext) -> smtplib.SMTP:
    # This machine's name for EHLO: smtplib's default (getfqdn) may wait on reverse DNS.
    name = socket.gethostname() or "lookout"
    if server.implicit_tls:
        return smtplib.SMTP_SSL(server.host, server.port, local_hostname=name, timeout=timeout_s, context=context)
    return smtplib.SMTP(server.host, server.port, local_hostname=name, timeout=timeout_s)


def _reply(error: smtplib.SMTPResponseException) -> str:
    text = error.smtp_error.decode("utf-8", "replace") if isinstance(error.smtp_error, bytes) else str(error.smtp_error)
    return f"{error.smtp_code} {text}".strip()


def _refusals(recipients: dict[str, tuple[int, bytes]]) -> str:
    """Each refused address (its first 100 characters) with the server's reply."""
    return "; ".join(f"{who[:100]} ({code} {reply.decode('utf-8', 'replace')})"
                     for who, (code, reply) in recipients.items())


def _failed(sentence: str) -> Delivered:
    return Delivered(ok=False, error=cut_error(sentence))
