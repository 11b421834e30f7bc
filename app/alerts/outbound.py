"""Webhook requests under the outbound policy: where an alert may be POSTed, and the POST itself.

    url_problem(url)          is this a URL a webhook may have? (http(s), a host, no user info, ...)
    OutboundPolicy.refusal    may we connect to this address for this host? (non-global: only if allowed)
    post(url, outgoing, ...)  resolve, check every address, connect to a checked one, POST; a Delivered
    system_resolver           how `post` looks a host up (getaddrinfo); another `Resolver` can stand in

The host is resolved on every send, each address is checked, and the request goes to the checked
address itself (the URL's host kept in `Host` and, for https, in TLS's SNI and certificate check): no
second lookup between check and connect, so a DNS answer that changes (rebinding) cannot slip a
private address through. No redirect is followed, proxies from the environment are ignored, and of a
failing answer at most ERROR_BYTES are read.

The URL is a secret (a Slack or Discord webhook's is all it takes to post), so a send leaves it
nowhere: the request goes through httpx's transport, not `AsyncClient.send`, which sentry-sdk's httpx
integration wraps with a span, a breadcrumb and trace headers (and httpx logs each request's URL
there); and a failure's sentence has the URL masked (app/alerts/url_masking.py), for a server may echo
its path (`Cannot POST /services/…`) and the sentence is stored and logged.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import re
import socket
import ssl
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace

import httpx

from app.alerts.alert import ERROR_BYTES, Delivered, Outgoing, cut_error
from app.alerts.url_masking import unquoted
from app.protocol.addresses import IPAddress, embedded, non_global_kind

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]  # (host, port) -> its addresses, in order

MAX_URL = 2048
MAX_ENTRY = 253  # a DNS name's longest
MAX_TRIES = 3  # addresses tried in turn when one refuses the connection
_HOST_NAME = re.compile(r"^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$")
# RFC 3986's characters: no spaces, controls or raw non-ASCII (an international host is written xn--).
_URL_CHARACTERS = re.compile(r"^[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]*$")


def url_problem(url: str) -> str | None:
    """Why `url` cannot be a webhook's, a sentence; None when it can."""
    if len(url) > MAX_URL:
        return f"The webhook URL is longer than {MAX_URL} characters."
    if not _URL_CHARACTERS.fullmatch(url):
        return ("The webhook URL holds a character a URL cannot (a space, a control character or non-ASCII; "
                "write an international host name in its xn-- form).")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as error:
        return f"The webhook URL is not a valid URL ({error})."
    if parsed.scheme not in ("http", "https"):
        return "The webhook URL must start with http:// or https://."
    if parsed.userinfo:
        return "The webhook URL must not hold a user name or password."
    host = parsed.raw_host.decode("ascii").lower()
    if not host:
        return "The webhook URL has no host."
    if _ip(host) is None and not _HOST_NAME.fullmatch(host):
        return f"The webhook URL's host {host!r} is neither a host name nor an IP address."
    if parsed.port is not None and not 0 < parsed.port < 65536:
        return f"The webhook URL's port {parsed.port} is not between 1 and 65535."
    return None


@dataclass(frozen=True)
class OutboundPolicy:
    """Which non-global destinations are allowed anyway: host names and networks (LOOKOUT_WEBHOOK_ALLOW)."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_entries(cls, entries: Sequence[str]) -> OutboundPolicy:
        """Host names, IP addresses and CIDRs (`hooks.internal`, `10.0.0.7`, `10.1.0.0/16`, `fd00::/8`);
        ValueError (a sentence, without the setting's name) for an entry that is none of these."""
        hosts: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            if len(entry) > MAX_ENTRY or "://" in entry:
                raise ValueError(f"{raw[:80]!r} is not a host name, an IP address or a CIDR "
                                 "(write `hooks.internal` or `10.0.0.0/8`, not a URL).")
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                if "/" in entry or ":" in entry or not _HOST_NAME.fullmatch(entry):
                    raise ValueError(f"{raw[:80]!r} is not a host name, an IP address or a CIDR "
                                     "(`hooks.internal`, `10.0.0.7`, `10.0.0.0/8`).") from None
            hosts.add(entry.rstrip("."))
        return cls(frozenset(hosts), tuple(networks))

    def refusal(self, host: str, address: str) -> str | None:
        """None when `host`, resolved to `address`, may be connected to; else a sentence why not."""
        ip = _ip(address)
        if ip is None:
            return f"The webhook's host {host} resolved to {address!r}, which is not an IP address."
        kind = non_global_kind(ip)
        if kind is None or self._allows(host, ip):
            return None
        shown = host if _ip(host) == ip else f"{host} resolves to {address}, which"
        return (f"The webhook's host {shown} is {kind}; add the host or its network to LOOKOUT_WEBHOOK_ALLOW "
                "to send alerts there.")

    def _allows(self, host: str, ip: IPAddress) -> bool:
        if host.lower().rstrip(".") in self.hosts:
            return True
        return any(candidate.version == network.version and candidate in network
                   for candidate in {ip, embedded(ip)} for network in self.networks)


def _ip(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return None


async def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses as the system resolves them (getaddrinfo, in a thread), in its order."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


async def post(url: str, outgoing: Outgoing, policy: OutboundPolicy, timeout_s: float = 10.0, *,
               verify: ssl.SSLContext | None = None, resolver: Resolver = system_resolver) -> Delivered:
    """POST `outgoing` to `url` under `policy`; never raises (but for cancellation).

    Each step (resolving, connecting, writing, each read) has `timeout_s`; the whole send 3 × that.
    `verify`: the certificates trusted for https (default: httpx's, honouring SSL_CERT_FILE).
    `resolver`: how the host is looked up (the system's; tests give a DNS answer of their own).
    """
    delivered = await _post(url, outgoing, policy, timeout_s, verify, resolver)
    return replace(delivered, error=cut_error(unquoted(delivered.error, url))) if delivered.error else delivered


async def _post(url: str, outgoing: Outgoing, policy: OutboundPolicy, timeout_s: float, verify: ssl.SSLContext | None,
                resolver: Resolver) -> Delivered:
    problem = url_problem(url)
    if problem is not None:
        return Delivered(ok=False, error=problem)
    target = httpx.URL(url)
    try:
        async with asyncio.timeout(3 * timeout_s):
            addresses = await _resolve(target, timeout_s, resolver)
            for address in addresses:
                refused = policy.refusal(_host(target), address)
                if refused is not None:
                    return Delivered(ok=False, error=refused)
            return await _send(target, addresses[:MAX_TRIES], outgoing, timeout_s, verify or _default_context())
    except TimeoutError:
        return Delivered(ok=False, error=f"The webhook did not answer within {timeout_s:g} s.")
    except _Unresolved as error:
        return Delivered(ok=False, error=cut_error(str(error)))
    except Exception as error:  # noqa: BLE001 (a send's failure is the delivery's, never the sender's)
        return Delivered(ok=False, error=cut_error(f"The webhook could not be reached: {_describe(error)}."))


class _Unresolved(Exception):
    """The host has no address; the message is the sentence."""


async def _resolve(target: httpx.URL, timeout_s: float, resolver: Resolver) -> list[str]:
    """The host's addresses, in the resolver's order, each once."""
    host = _host(target)
    port = target.port or (443 if target.scheme == "https" else 80)
    try:
        async with asyncio.timeout(timeout_s):
            found = await resolver(host, port)
    except TimeoutError as error:
        raise _Unresolved(f"The webhook's host {host} was not resolved within {timeout_s:g} s.") from error
    except OSError as error:
        raise _Unresolved(f"The webhook's host {host} could not be resolved ({error}).") from error
    addresses = list(dict.fromkeys(found))
    if not addresses:
        raise _Unresolved(f"The webhook's host {host} has no address.")
    return addresses


async def _send(target: httpx.URL, addresses: list[str], outgoing: Outgoing, timeout_s: float,
                verify: ssl.SSLContext) -> Delivered:
    """POST to each checked address in turn until one takes the connection, through the transport
    alone (no client: nothing instrumented sees the URL; a transport follows no redirect, uses no proxy)."""
    headers = {**outgoing.headers, "Host": target.netloc.decode("ascii"), "Accept-Encoding": "identity"}
    extensions: dict[str, object] = {"timeout": httpx.Timeout(timeout_s).as_dict()}
    if target.scheme == "https":
        extensions["sni_hostname"] = _host(target)
    async with httpx.AsyncHTTPTransport(verify=verify, trust_env=False) as transport:
        for tried, address in enumerate(addresses, start=1):
            # The address as the URL's host: httpx connects to it and never looks the name up again.
            request = httpx.Request("POST", target.copy_with(host=address.split("%")[0]), content=outgoing.body,
                                    headers=headers, extensions=extensions)
            try:
                answer = await transport.handle_async_request(request)
                answer.request = request
            except httpx.ConnectError as error:
                if tried == len(addresses):
                    return Delivered(ok=False, error=cut_error(
                        f"The webhook's host {_host(target)} could not be connected to at {address}: "
                        f"{_describe(error)}."))
                continue
            except httpx.TimeoutException:
                return Delivered(ok=False, error=f"The webhook did not answer within {timeout_s:g} s.")
            try:
                return await _delivered(answer)
            finally:
                await answer.aclose()
    raise AssertionError("unreachable: there is at least one address")


async def _delivered(answer: httpx.Response) -> Delivered:
    status = answer.status_code
    if 200 <= status < 300:
        return Delivered(ok=True, status=status)
    if 300 <= status < 400:
        return Delivered(ok=False, status=status, error=f"The webhook answered {status} (a redirect, not followed).")
    head = bytearray()
    async for chunk in answer.aiter_raw():  # raw: no decompression, so the bound holds on the wire too
        head += chunk[: ERROR_BYTES - len(head)]
        if len(head) >= ERROR_BYTES:
            break
    text = bytes(head).decode("utf-8", "replace").strip()
    sentence = f"The webhook answered {status}: {text}" if text else f"The webhook answered {status}."
    return Delivered(ok=False, status=status, error=cut_error(sentence))


def _host(target: httpx.URL) -> str:
    """The URL's host as resolved and checked: lower case, IDNA-encoded, no brackets."""
    return target.raw_host.decode("ascii").lower()


def _describe(error: Exception) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


@functools.cache
def _default_context() -> ssl.SSLContext:
    """httpx's default trust (certifi, or SSL_CERT_FILE/SSL_CERT_DIR), made once: loading it is slow."""
    return httpx.create_ssl_context()
