"""Whether a request is trusted as "this machine": the one rule the inbox API, the origin guard
and the console's states share.

From this machine the console is open, with every right, and needs no sign-in. A request counts
as this machine only when all three hold:

- its peer and every X-Forwarded-For address are loopback (`reflex_lookout/protocol/clients.py`): a proxy on this
  machine serving a client elsewhere says so in X-Forwarded-For;
- its `Host` names this machine: `localhost`, `*.localhost`, a loopback address, or the host of
  LOOKOUT_PUBLIC_URL. DNS rebinding (evil.example resolving to 127.0.0.1) sends `Host: evil.example`;
- its `Origin`, when sent, is the app's own (`own_origin`): a page of another site, open in a
  browser on this machine, sends its own origin.

The app's own origins: the request's own (`Origin` naming the `Host` the request was sent to:
prod serves the page and the backend on one port), the front end's (dev: the page is served by
Vite on the frontend port and opens the websocket to the backend's port; Reflex's `deploy_url`),
and LOOKOUT_PUBLIC_URL's. A header sent twice is read joined, as Reflex joins it (", "), so a
second `Host` or `Origin` never matches.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from app.settings import SETTINGS
from reflex_lookout.protocol.clients import all_loopback, as_address, forwarded_chain, is_loopback

MAX_NAME_CHARS = 1024  # a longer Host or Origin is no name of ours
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_READ = frozenset({"host", "origin", "x-forwarded-for", "x-forwarded-proto"})


@dataclass(frozen=True)
class Caller:
    """What a request says about where it comes from: the socket's peer and four headers."""

    peer: str
    forwarded_for: tuple[str, ...] = ()  # every X-Forwarded-For address, in order
    host: str = ""
    origin: str | None = None  # None: not sent
    forwarded_proto: str = ""

    @classmethod
    def from_headers(cls, peer: str, headers: Mapping[str, str]) -> Caller:
        """From lower-case header names to values, repeated headers joined with ", " (Reflex's
        `router.headers.raw_headers`)."""
        return cls(
            peer=peer,
            forwarded_for=tuple(forwarded_chain([headers.get("x-forwarded-for", "")])),
            host=_bounded(headers.get("host", "")),
            origin=_bounded(headers["origin"]) if headers.get("origin") else None,
            forwarded_proto=headers.get("x-forwarded-proto", "")[:MAX_NAME_CHARS],
        )

    @classmethod
    def from_scope(cls, scope: Mapping[str, Any]) -> Caller:
        """From an ASGI HTTP or websocket scope."""
        client = scope.get("client")
        return cls.from_headers(client[0] if client else "", joined(scope.get("headers", ())))

    @classmethod
    def from_router(cls, router: Any) -> Caller:
        """From a Reflex state's `self.router`: the headers of the websocket's own HTTP upgrade
        (never the event's payload), and its peer (`client_ip` is the peer while Reflex's own
        `trusted_proxy_hops` is 0, its default; X-Forwarded-For is read here instead)."""
        return cls.from_headers(router.session.client_ip, router.headers.raw_headers)


def joined(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """The headers this module reads, from ASGI's (name, value) pairs, repeats joined with ", "."""
    found: dict[str, str] = {}
    for raw_name, raw_value in headers:
        name = raw_name.decode("latin-1").lower()
        if name in _READ:
            value = raw_value.decode("latin-1")
            found[name] = f"{found[name]}, {value}" if name in found else value
    return found


@dataclass(frozen=True)
class Site:
    """The names of this app: the front end's origins and the public URL (LOOKOUT_PUBLIC_URL)."""

    frontend_origins: frozenset[str]
    public_origin: str = ""
    public_host: str = ""

    @classmethod
    def build(cls, deploy_url: str, frontend_port: int | None, public_url: str) -> Site:
        origins = {origin_of(deploy_url)} if deploy_url else set()
        if frontend_port:
            origins.update(f"http://{name}:{frontend_port}" for name in LOOPBACK_NAMES)
        public = urlsplit(public_url) if public_url else None
        return cls(
            frontend_origins=frozenset(origins - {""}),
            public_origin=origin_of(public_url) if public_url else "",
            public_host=(public.hostname or "") if public else "",
        )


@functools.cache
def this_site() -> Site:
    """This app's names, from Reflex's config (read once, when first needed) and the settings."""
    from reflex_base.config import get_config
    from reflex_base.constants import DefaultPorts

    config = get_config()  # `reflex run` sets the port it picked (dev: the next free one) in the environment
    return Site.build(config.deploy_url or "", config.frontend_port or DefaultPorts.FRONTEND_PORT, SETTINGS.public_url)


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a URL, lower-case, as a browser sends it in `Origin`."""
    parts = urlsplit(url.strip())
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def host_name(host: str) -> str:
    """The name in a `Host` header, lower-case, without its port ("" if it is not `name[:port]`)."""
    if host.startswith("["):  # an IPv6 address
        inside, _, port = host[1:].partition("]")
        name = f"[{inside}]"
        if port and not port.startswith(":"):
            return ""
        port = port[1:]
    else:
        name, _, port = host.partition(":")
    if port and not port.isdigit():
        return ""
    return name.lower().rstrip(".")


def local_host(host: str, site: Site) -> bool:
    """Whether a `Host` header names this machine: a loopback name or address, or the public host."""
    name = host_name(host)
    if not name:
        return False
    if name == "localhost" or name.endswith(".localhost"):  # browsers never resolve these elsewhere
        return True
    address = as_address(name.strip("[]"))
    if address is not None:
        return address.is_loopback
    return bool(site.public_host) and name == site.public_host


def own_origin(origin: str, host: str, site: Site) -> bool:
    """Whether an `Origin` is the app's own: the request's own host, the front end's, or the public URL's."""
    origin = origin.lower()
    if origin in site.frontend_origins or (site.public_origin and origin == site.public_origin):
        return True
    scheme, _, netloc = origin.partition("://")
    return scheme in ("http", "https") and bool(netloc) and netloc == host.lower()


def foreign_origin(caller: Caller, site: Site | None = None) -> bool:
    """Whether the request carries an `Origin` that is not the app's own (a page of another site)."""
    return caller.origin is not None and not own_origin(caller.origin, caller.host, site or this_site())


def this_machine(caller: Caller, site: Site | None = None) -> bool:
    """Whether the request comes from this machine, by a program or by one of the app's own pages."""
    site = site or this_site()
    return (all_loopback(caller.peer, list(caller.forwarded_for))
            and local_host(caller.host, site)
            and not foreign_origin(caller, site))


def forwarded_https(caller: Caller, trusted_hops: int) -> bool:
    """Whether a proxy on this machine says the client reached it over https: the X-Forwarded-Proto
    entry of the outermost proxy believed (the peer, then each loopback hop before it, up to
    `trusted_hops`)."""
    protos = [p.strip().lower() for p in caller.forwarded_proto.split(",") if p.strip()]
    if trusted_hops < 1 or not protos or not is_loopback(caller.peer):
        return False
    proxies, chain = 1, caller.forwarded_for
    while proxies < trusted_hops and proxies <= len(chain) and is_loopback(chain[-proxies]):
        proxies += 1
    return protos[-min(proxies, len(protos))] == "https"


def _bounded(value: str) -> str:
    return value.strip() if len(value) <= MAX_NAME_CHARS else "\0too long"
