"""SMTP sends against a real aiosmtpd server on loopback: plain, STARTTLS, smtps, logins, failures."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from email.message import EmailMessage

import pytest

from app.alerts.alert import ERROR_BYTES
from app.alerts.mail import SmtpServer, send
from tests.alerts.certificates import certificate
from tests.alerts.receivers import MailReceiver, closed_port

USER, PASSWORD = "alerts@example.com", "p:ss w%rd"


def message(subject: str = "[Lookout] A new issue: TypeError") -> EmailMessage:
    made = EmailMessage()
    made["From"], made["To"], made["Subject"] = "lookout@example.com", "team@example.com", subject
    made.set_content("TypeError: x is undefined\nhttps://lookout.example.com/issues/7\n")
    return made


@pytest.fixture
def tls_receiver() -> Iterator[MailReceiver]:
    with MailReceiver(starttls=certificate().server_context(), auth=(USER, PASSWORD)) as serving:
        yield serving


# --- the URL ------------------------------------------------------------------------------------

@pytest.mark.parametrize("url, server", [
    ("smtp://mail.example.com", SmtpServer("mail.example.com", 25)),
    ("smtp://mail.example.com:2525/", SmtpServer("mail.example.com", 2525)),
    ("smtps://mail.example.com", SmtpServer("mail.example.com", 465, implicit_tls=True)),
    ("smtp://alerts%40example.com:p%3Ass%20w%25rd@mail.example.com:587",
     SmtpServer("mail.example.com", 587, USER, PASSWORD)),
    ("smtps://bot:@[::1]:4650", SmtpServer("::1", 4650, "bot", "", implicit_tls=True)),
])
def test_the_url_names_server_port_and_login(url: str, server: SmtpServer) -> None:
    assert SmtpServer.from_url(url) == server


@pytest.mark.parametrize("url, says", [
    ("http://mail.example.com", "must start with smtp:// (STARTTLS when offered) or smtps://"),
    ("mail.example.com:25", "must start with smtp://"),
    ("smtp://", "no host"),
    ("smtp://user:hunter2@", "no host"),
    ("smtp://mail.example.com:99999", "port is not a number"),
    ("smtp://user:hunter2@mail.example.com:abc", "port is not a number"),
    ("smtp://:hunter2@mail.example.com", "a password but no user name"),
    ("smtp://mail.example.com/inbox", "no path, query or fragment"),
    ("smtp://mail.example.com?tls=1", "no path, query or fragment"),
    ("smtp://mail.example.com/" + "a" * 2048, "longer than 2048"),
])
def test_a_bad_url_is_a_value_error_that_never_shows_the_password(url: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        SmtpServer.from_url(url)
    assert says in str(raised.value) and "hunter2" not in str(raised.value)


def test_the_password_stays_out_of_the_repr() -> None:
    assert "hunter2" not in repr(SmtpServer.from_url("smtp://bot:hunter2@mail.example.com"))


# --- sending ------------------------------------------------------------------------------------

def test_a_plain_server_gets_the_message_without_login() -> None:
    with MailReceiver() as receiver:
        delivered = send(SmtpServer(receiver.host, receiver.port), message())
        assert delivered.ok and delivered.error == ""
        (got,) = receiver.wait_for(1)
        assert got["Subject"] == "[Lookout] A new issue: TypeError"
        assert "https://lookout.example.com/issues/7" in got.get_content()
        (envelope,) = receiver.envelopes
        assert (envelope.mail_from, envelope.rcpt_tos, envelope.tls, envelope.user) == (
            "lookout@example.com", ["team@example.com"], False, "")


def test_starttls_when_offered_then_login(tls_receiver: MailReceiver) -> None:
    server = SmtpServer.from_url(f"smtp://alerts%40example.com:p%3Ass%20w%25rd@localhost:{tls_receiver.port}")
    delivered = send(server, message(), context=certificate().client_context())
    assert delivered.ok, delivered.error
    assert len(tls_receiver.wait_for(1)) == 1
    (envelope,) = tls_receiver.envelopes
    assert envelope.tls and envelope.user == USER


def test_starttls_is_used_without_a_login_too() -> None:
    with MailReceiver(starttls=certificate().server_context()) as receiver:  # it refuses MAIL before STARTTLS
        delivered = send(SmtpServer("localhost", receiver.port), message(), context=certificate().client_context())
        assert delivered.ok, delivered.error
        assert receiver.envelopes[0].tls


def test_smtps_is_tls_from_the_first_byte() -> None:
    with MailReceiver(starttls=certificate().server_context(), implicit_tls=True, auth=(USER, PASSWORD)) as receiver:
        server = SmtpServer.from_url(f"smtps://alerts%40example.com:p%3Ass%20w%25rd@localhost:{receiver.port}")
        delivered = send(server, message(), context=certificate().client_context())
        assert delivered.ok, delivered.error
        receiver.wait_for(1)
        assert receiver.envelopes[0].tls and receiver.envelopes[0].user == USER


def test_a_wrong_password_is_a_sentence_with_the_server_s_reply(tls_receiver: MailReceiver) -> None:
    server = SmtpServer("localhost", tls_receiver.port, USER, "wrong-secret")
    delivered = send(server, message(), context=certificate().client_context())
    assert not delivered.ok
    assert delivered.error.startswith(f"The SMTP server at localhost:{tls_receiver.port} refused the login of "
                                      f"'{USER}': 535 ")
    assert "wrong-secret" not in delivered.error
    assert tls_receiver.messages == []


def test_a_password_is_never_sent_over_a_plain_connection() -> None:
    with MailReceiver(auth=(USER, PASSWORD)) as receiver:  # it would take AUTH without TLS
        delivered = send(SmtpServer(receiver.host, receiver.port, USER, PASSWORD), message())
        assert not delivered.ok and "does not offer STARTTLS, so the password was not sent" in delivered.error
        assert receiver.logins == [] and receiver.messages == []


def test_an_untrusted_certificate_is_a_sentence(tls_receiver: MailReceiver) -> None:
    delivered = send(SmtpServer("localhost", tls_receiver.port, USER, PASSWORD), message())  # the system's trust
    assert not delivered.ok and delivered.error.startswith(f"TLS with the SMTP server at localhost:{tls_receiver.port}")
    assert "CERTIFICATE_VERIFY_FAILED" in delivered.error
    assert tls_receiver.logins == []


def test_a_server_that_is_down_is_a_sentence_then_delivered_once_back() -> None:
    assert send(SmtpServer("127.0.0.1", closed_port()), message()).error.endswith("refused the connection.")
    with MailReceiver() as receiver:
        receiver.down()
        delivered = send(SmtpServer(receiver.host, receiver.port), message())
        assert delivered == send(SmtpServer(receiver.host, receiver.port), message())
        assert not delivered.ok
        assert delivered.error == f"The SMTP server at 127.0.0.1:{receiver.port} refused the connection."
        receiver.up()
        assert send(SmtpServer(receiver.host, receiver.port), message()).ok
        assert len(receiver.wait_for(1)) == 1


def test_a_server_that_never_greets_times_out() -> None:
    with socket.socket() as silent:  # connections complete in its backlog, and nothing is ever said
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        delivered = send(SmtpServer("127.0.0.1", port), message(), timeout_s=0.3)
    assert not delivered.ok and delivered.error == f"The SMTP server at 127.0.0.1:{port} did not answer within 0.3 s."


def test_a_refused_recipient_is_a_short_sentence_with_the_server_s_reply() -> None:
    with MailReceiver() as receiver:
        long = message()
        del long["To"]
        long["To"] = "x" * 2000 + "@example.com"  # aiosmtpd refuses a line this long
        delivered = send(SmtpServer(receiver.host, receiver.port), long)
        assert receiver.messages == []
    assert not delivered.ok
    assert delivered.error == (f"The SMTP server at 127.0.0.1:{receiver.port} refused every recipient: "
                               f"{'x' * 100} (500 Command line too long).")
    assert len(delivered.error.encode()) <= ERROR_BYTES
