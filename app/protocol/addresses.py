"""What kind of address an IP address is: `non_global_kind` names a non-global one ("a loopback
address", "a private address", ...), judging an IPv6 address that carries an IPv4 one by the IPv4 one
(`embedded`). The webhooks' outbound policy (app/alerts/outbound.py) and the dev servers' loopback
rule (app/projects/sourcemap_options.py) use it."""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT
_PRIVATE = tuple(ipaddress.IPv4Network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))  # RFC 1918
_UNIQUE_LOCAL = ipaddress.IPv6Network("fc00::/7")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_METADATA = ipaddress.ip_address("169.254.169.254")


def non_global_kind(ip: IPAddress) -> str | None:
    """What kind of non-global address `ip` is ("a loopback address", ...); None for a global one.
    An IPv6 address carrying an IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 one."""
    ip = embedded(ip)
    if ip.is_unspecified:
        return "an unspecified address"
    if ip.is_loopback:
        return "a loopback address"
    if ip == _METADATA:
        return "the cloud metadata address"
    if ip.is_link_local:
        return "a link-local address"
    if ip in _SHARED:
        return "a carrier-grade NAT address"
    if ip in _UNIQUE_LOCAL:
        return "a unique-local address"
    if ip.is_multicast:
        return "a multicast address"
    if any(ip in network for network in _PRIVATE):
        return "a private address"
    if ip.is_reserved or not ip.is_global:
        return "a reserved address"
    return None


def embedded(ip: IPAddress) -> IPAddress:
    """The IPv4 address an IPv6 one stands for (::ffff:a.b.c.d, 64:ff9b::a.b.c.d, 2002:AABB:CCDD::), else `ip`."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        if ip in _NAT64:
            return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if ip.sixtofour is not None:
            return ip.sixtofour
    return ip
