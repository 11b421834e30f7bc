"""Webhook POSTs under the outbound policy, against a real HTTP(S) receiver on loopback."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Callable, Iterator

import pytest
import sentry_sdk
from reflex_base import otel

from app.alerts.alert import ERROR_BYTES, Outgoing
from app.alerts.outbound import OutboundPolicy, Resolver, post, url_problem
from app.protocol.addresses import non_global_kind
from app.settings import Settings
from plugin_support.helpers import CapturingTransport
from reflex_lookout import event_tracing, server
from tests.alerts.certificates import certificate
from tests.alerts.receivers import WebhookReceiver
from tests.environment import LOCAL_ENV

pytestmark = pytest.mark.anyio

NOBODY = OutboundPolicy()  # no exception: every non-global address is refused
LOOPBACK = OutboundPolicy.from_entries(["127.0.0.0/8", "::1"])
SLACK_SECRET = "s3cretSlackWebhookToken"  # a Slack URL's last segment: whoever has it may post
SLACK_PATH = f"/services/T0000000/B0000000/{SLACK_SECRET}"
MESSAGE = Outgoing(body=b'{"title":"boom"}', headers={"Content-Type": "application/json", "X-Lookout-Signature": "s"})


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    with WebhookReceiver() as serving:
        yield serving


# --- URLs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("url, says", [
    ("ftp://hooks.example.com/x", "http:// or https://"),
    ("javascript:alert(1)", "http:// or https://"),
    ("hooks.example.com/x", "http:// or https://"),
    ("http:///path", "no host"),
    ("https://user:pw@hooks.example.com/x", "user name or password"),
    ("https://hooks.example.com/" + "a" * 2048, "longer than 2048"),
    ("https://hooks.example.com/a b", "character a URL cannot"),
    ("https://hooks.example.com/\n", "character a URL cannot"),
    ("https://héllo.example/", "xn--"),
    ("https://ex%41mple.com/", "neither a host name nor an IP address"),
    ("https://hooks.example.com:0/", "between 1 and 65535"),
    ("https://hooks.example.com:70000/", "between 1 and 65535"),
])
def test_a_url_that_cannot_be_a_webhook_is_told_why(url: str, says: str) -> None:
    problem = url_problem(url)
    assert problem is not None and says in problem and problem.endswith(".")


@pytest.mark.parametrize("url", [
    "https://hooks.slack.com/services/T000/B000/XXXX",
    "http://10.0.0.7:8080/hook?x=1",
    "https://[2001:db8::1]/hook",
    "https://xn--hllo-bpa.example/",
    "https://discord.com/api/webhooks/1/abc#secret=s3",
])
def test_a_webhook_url_passes(url: str) -> None:
    assert url_problem(url) is None


async def test_posting_to_a_bad_url_is_a_failed_delivery_not_an_exception() -> None:
    delivered = await post("ftp://hooks.example.com/x", MESSAGE, NOBODY)
    assert not delivered.ok and delivered.error == url_problem("ftp://hooks.example.com/x")


# --- the policy ---------------------------------------------------------------------------------

@pytest.mark.parametrize("address, kind", [
    ("127.0.0.1", "loopback"),
    ("127.8.9.10", "loopback"),
    ("::1", "loopback"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.1.1", "link-local"),
    ("fe80::1", "link-local"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("192.168.1.1", "private"),
    ("100.64.0.1", "carrier-grade NAT"),
    ("100.127.255.254", "carrier-grade NAT"),
    ("fc00::1", "unique-local"),
    ("fd12:3456::1", "unique-local"),
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.0.0.1", "private"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("64:ff9b::7f00:1", "loopback"),  # NAT64 of 127.0.0.1
    ("2002:a00:1::", "private"),  # 6to4 of 10.0.0.1
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("192.0.2.1", "reserved"),  # documentation
    ("198.18.0.1", "reserved"),  # benchmarking
    ("2001:db8::1", "reserved"),
])
def test_a_non_global_address_is_refused_and_told_what_it_is(address: str, kind: str) -> None:
    refusal = NOBODY.refusal("hooks.example.com", address)
    assert refusal is not None
    assert f"hooks.example.com resolves to {address}" in refusal or address in refusal
    assert kind in refusal and "LOOKOUT_WEBHOOK_ALLOW" in refusal


@pytest.mark.parametrize("address", ["8.8.8.8", "1.1.1.1", "100.128.0.1", "172.32.0.1", "2606:4700:4700::1111",
                                     "::ffff:8.8.8.8"])
def test_a_global_address_is_allowed(address: str) -> None:
    assert NOBODY.refusal("hooks.example.com", address) is None
    assert non_global_kind(ipaddress.ip_address(address)) is None


def test_the_allow_list_admits_hosts_by_name_and_addresses_by_network() -> None:
    policy = OutboundPolicy.from_entries([" Hooks.Internal ", "10.0.0.0/8", "[fd00::7]", "192.168.5.6", ""])
    assert policy.refusal("hooks.internal", "192.168.1.1") is None
    assert policy.refusal("HOOKS.internal.", "169.254.169.254") is None  # the name is what was allowed
    assert policy.refusal("other.internal", "10.200.3.4") is None
    assert policy.refusal("other.internal", "::ffff:10.200.3.4") is None  # the same address, IPv4-mapped
    assert policy.refusal("other.internal", "fd00::7") is None
    assert policy.refusal("other.internal", "192.168.5.6") is None
    assert policy.refusal("other.internal", "192.168.5.7") is not None
    assert policy.refusal("other.internal", "127.0.0.1") is not None
    assert policy.refusal("other.internal", "fd00::8") is not None
    assert policy.refusal("hooks.internal.evil.com", "10.0.0.1") is None  # by network, not by name
    assert policy.refusal("hooks.internal.evil.com", "192.168.1.1") is not None


@pytest.mark.parametrize("entry", ["http://hooks.internal/", "10.0.0.0/33", "hooks internal", "fd00::zz",
                                   "10.0.0.0/8/8", "a" * 300])
def test_a_bad_allow_entry_is_a_value_error_with_a_sentence(entry: str) -> None:
    with pytest.raises(ValueError, match="^'.*' is not a host name, an IP address or a CIDR"):
        OutboundPolicy.from_entries([entry])


def test_an_unparsable_address_is_refused() -> None:
    refusal = LOOPBACK.refusal("h", "not-an-address")
    assert refusal is not None and "not an IP address" in refusal


# --- sending ------------------------------------------------------------------------------------

async def test_loopback_is_refused_unless_its_network_is_allowed(receiver: WebhookReceiver) -> None:
    refused = await post(receiver.url("/hook?x=1"), MESSAGE, NOBODY)
    assert not refused.ok and "127.0.0.1 is a loopback address" in refused.error
    assert refused.status is None

    delivered = await post(receiver.url("/hook?x=1"), MESSAGE, LOOPBACK)
    assert delivered.ok and delivered.status == 200 and delivered.error == ""
    (got,) = receiver.wait_for(1)
    assert len(receiver.received) == 1  # the refused send never connected
    assert (got.method, got.path, got.body) == ("POST", "/hook?x=1", MESSAGE.body)
    assert got.headers["content-type"] == "application/json" and got.headers["x-lookout-signature"] == "s"
    assert got.headers["host"] == f"127.0.0.1:{receiver.port}"


async def test_a_name_resolving_to_loopback_is_refused_unless_the_name_is_allowed(receiver: WebhookReceiver) -> None:
    for url in (receiver.url(host="localhost"), receiver.url(host="2130706433"), receiver.url(host="0x7f.1")):
        refused = await post(url, MESSAGE, NOBODY)
        assert not refused.ok and "is a loopback address" in refused.error, url

    # localhost may resolve to ::1 first, where nothing listens: the next checked address is tried.
    delivered = await post(receiver.url(host="localhost"), MESSAGE, OutboundPolicy.from_entries(["localhost"]))
    assert delivered.ok, delivered.error
    (got,) = receiver.wait_for(1)
    assert got.headers["host"] == f"localhost:{receiver.port}"  # the name, though the address was connected to
    assert len(receiver.received) == 1


def answering(*addresses: str) -> Resolver:
    """A DNS answer of our own: the host resolves to `addresses`, in this order."""

    async def resolve(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolve


async def test_every_address_of_the_answer_is_checked_not_only_the_first(receiver: WebhookReceiver) -> None:
    # A name resolving to an allowed address and a private one: connecting to the first fails over to
    # the next, so one private address anywhere in the answer refuses the whole send.
    for answer in (("127.0.0.1", "10.0.0.7"), ("127.0.0.1", "127.0.0.2", "::ffff:192.168.1.1")):
        refused = await post(receiver.url(host="hooks.example.com"), MESSAGE, LOOPBACK, resolver=answering(*answer))
        assert not refused.ok and f"hooks.example.com resolves to {answer[-1]}, which is a private address" in refused.error
    assert receiver.received == []  # refused before any connection
    delivered = await post(receiver.url(host="hooks.example.com"), MESSAGE, LOOPBACK,
                           resolver=answering("127.0.0.1", "127.0.0.2"))
    assert delivered.ok, delivered.error
    assert receiver.wait_for(1)[0].headers["host"] == f"hooks.example.com:{receiver.port}"


async def test_a_redirect_is_not_followed(receiver: WebhookReceiver) -> None:
    delivered = await post(receiver.url("/redirect"), MESSAGE, LOOPBACK)
    assert not delivered.ok and delivered.status == 302
    assert delivered.error == "The webhook answered 302 (a redirect, not followed)."
    assert [got.path for got in receiver.received] == ["/redirect"]


async def test_a_failing_answer_is_kept_to_one_kilobyte(receiver: WebhookReceiver) -> None:
    receiver.answer(503, b"busy, try later")
    delivered = await post(receiver.url(), MESSAGE, LOOPBACK)
    assert (delivered.ok, delivered.status) == (False, 503)
    assert delivered.error == "The webhook answered 503: busy, try later"

    receiver.answer(500, "é".encode() * 2_000_000)  # 4 MB, a multi-byte character across the cut
    delivered = await post(receiver.url(), MESSAGE, LOOPBACK)
    assert not delivered.ok and delivered.status == 500
    assert delivered.error.startswith("The webhook answered 500: éé")
    assert len(delivered.error.encode()) <= ERROR_BYTES and "\ufffd" not in delivered.error

    receiver.answer(404)
    delivered = await post(receiver.url(), MESSAGE, LOOPBACK)
    assert delivered.error == "The webhook answered 404."


async def test_a_failing_answer_is_not_read_to_its_end(receiver: WebhookReceiver) -> None:
    receiver.answer(500, b"no " * 1000, endless=True)  # reading it whole never ends: the send would time out
    delivered = await post(receiver.url(), MESSAGE, LOOPBACK, timeout_s=5)
    assert not delivered.ok and delivered.status == 500
    assert delivered.error.startswith("The webhook answered 500: no no")
    assert len(delivered.error.encode()) <= ERROR_BYTES


async def test_a_receiver_that_is_down_is_a_sentence_then_delivered_once_back(receiver: WebhookReceiver) -> None:
    receiver.down()
    delivered = await post(receiver.url(), MESSAGE, LOOPBACK)
    assert not delivered.ok and delivered.status is None
    assert delivered.error.startswith("The webhook's host 127.0.0.1 could not be connected to at 127.0.0.1: ")
    receiver.up()
    assert (await post(receiver.url(), MESSAGE, LOOPBACK)).ok
    assert len(receiver.wait_for(1)) == 1


async def test_a_proxy_from_the_environment_is_not_used(receiver: WebhookReceiver,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy would connect wherever it likes: the checked address must be the one connected to.
    with WebhookReceiver() as proxy:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
            monkeypatch.setenv(name, proxy.url(""))
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        assert (await post(receiver.url(), MESSAGE, LOOPBACK)).ok
        assert len(receiver.wait_for(1)) == 1 and proxy.received == []


async def test_a_slow_answer_times_out(receiver: WebhookReceiver) -> None:
    receiver.answer(200, b"late", delay_s=30)
    delivered = await post(receiver.url(), MESSAGE, LOOPBACK, timeout_s=0.5)
    assert not delivered.ok and delivered.error == "The webhook did not answer within 0.5 s."


async def test_an_unresolvable_host_is_a_sentence() -> None:
    delivered = await post("https://no-such-host.invalid/hook", MESSAGE, NOBODY, timeout_s=5)
    assert not delivered.ok and delivered.error.startswith("The webhook's host no-such-host.invalid ")


async def test_https_connects_to_the_checked_address_and_verifies_the_url_s_name() -> None:
    # The certificate names localhost only: connecting to 127.0.0.1 works only if TLS is told the name.
    cert = certificate("localhost")
    policy = OutboundPolicy.from_entries(["localhost"])
    with WebhookReceiver(tls=cert.server_context()) as receiver:
        delivered = await post(receiver.url(host="localhost"), MESSAGE, policy, verify=cert.client_context())
        assert delivered.ok, delivered.error
        (got,) = receiver.wait_for(1)
        assert got.headers["host"] == f"localhost:{receiver.port}" and got.body == MESSAGE.body

        untrusted = await post(receiver.url(host="localhost"), MESSAGE, policy)  # the default trust store
        assert not untrusted.ok and "CERTIFICATE_VERIFY_FAILED" in untrusted.error

        by_address = await post(receiver.url(), MESSAGE, LOOPBACK, verify=cert.client_context())
        assert not by_address.ok and "CERTIFICATE_VERIFY_FAILED" in by_address.error  # 127.0.0.1 is not named


# --- what the app's own reporting sees of a send --------------------------------------------------

async def test_a_send_leaves_its_url_in_no_breadcrumb_span_log_or_trace_header(
        receiver: WebhookReceiver, sentry_init: Callable[..., None], caplog: pytest.LogCaptureFixture) -> None:
    # sentry-sdk as the backend starts it (its httpx integration on), in a Reflex event's transaction,
    # with every logger's records passed: an error reported after the send carries its breadcrumbs.
    transport = CapturingTransport()
    sentry_init(transport=transport, **server.server_options(Settings.from_env(LOCAL_ENV)))
    caplog.set_level(logging.DEBUG)
    tracer = event_tracing.tracer_provider(event_tracing.EventTransactions()).get_tracer("reflex")
    attributes = {otel.ATTR_EVENT_NAME: "state.alerts_state.test_channel",
                  otel.ATTR_CODE_FUNCTION_NAME: "app.pages.alerts_state.AlertsState.test_channel"}
    with tracer.start_as_current_span("state.alerts_state.test_channel", attributes=attributes):
        delivered = await post(receiver.url(SLACK_PATH), MESSAGE, LOOPBACK)
        receiver.answer(404, f"Cannot POST {SLACK_PATH}".encode())
        failed = await post(receiver.url(SLACK_PATH), MESSAGE, LOOPBACK)
        logging.getLogger("app.alerts.test").warning("after the sends: %s", failed.error)
        sentry_sdk.capture_message("after the sends")
    sentry_sdk.flush()
    assert delivered.ok and not failed.ok
    items = [item for envelope in transport.envelopes for item in envelope.items]
    assert {"event", "transaction", "log"} <= {item.type for item in items}  # the reports did go out
    leaked = [(item.type, item.get_bytes().decode()) for item in items if SLACK_SECRET.encode() in item.get_bytes()]
    assert leaked == []
    assert not any(SLACK_SECRET in record.getMessage() for record in caplog.records)
    for got in receiver.wait_for(2):
        assert "sentry-trace" not in got.headers and "baggage" not in got.headers  # nor the backend's trace
