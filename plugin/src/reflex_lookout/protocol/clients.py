"""Who a request comes from: the address of its peer, and of the client behind the proxies trusted.

A proxy is trusted only when it runs on this machine (its address is loopback): a reverse proxy in
front of Lookout, or the dev server's. Each one appends the address it was reached from to
`X-Forwarded-For`; a client may send the header too, so only the last `trusted_hops` entries, added
by proxies on this machine, are believed. Every line of the header counts (a proxy may add its own
line rather than extend the client's).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

MAX_FORWARDED = 64  # addresses read from X-Forwarded-For at most; a longer chain is someone's invention


def as_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address, with IPv4-mapped IPv6 (`::ffff:127.0.0.1`, as Node's proxies report) read as IPv4."""
    try:
        found = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def is_loopback(text: str) -> bool:
    found = as_address(text)
    return found is not None and found.is_loopback


def forwarded_chain(lines: Iterable[str]) -> list[str]:
    """Every address of every X-Forwarded-For line, in order (at most MAX_FORWARDED, the last ones)."""
    chain = [part.strip() for line in lines for part in _tail(line).split(",") if part.strip()]
    return chain[-MAX_FORWARDED:]


def _tail(line: str) -> str:
    """The end of an over-long line, without the address cut in two: proxies append to a line, so
    its end is what the proxies trusted wrote, and its start what the client invented."""
    limit = MAX_FORWARDED * 48
    return line if len(line) <= limit else line[-limit:].partition(",")[2]


def client_address(peer: str, chain: list[str], trusted_hops: int) -> str:
    """The client's address: the peer, or, while the hop at hand is a proxy on this machine and hops
    remain trusted, the address that proxy says it was reached from."""
    client, remaining = peer, list(chain)
    for _ in range(trusted_hops):
        if not remaining or not is_loopback(client):
            break
        client = remaining.pop()
    return client


def all_loopback(peer: str, chain: list[str]) -> bool:
    """Whether the peer and every address the request passed through are this machine's."""
    return is_loopback(peer) and all(is_loopback(address) for address in chain)
