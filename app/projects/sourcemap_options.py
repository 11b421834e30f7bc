"""A project's source-map options: the dev servers whose modules its browser frames may be mapped
with (docs/sourcemaps.md, "Another app in dev mode").

In dev mode (`reflex run`, or any Vite dev server) a browser frame names a module of the dev server,
`http://127.0.0.1:3000/app/routes/_index.jsx`, whose source map is inline at its end. Lookout never
fetches from an address an event names unless told to: a project lists the origins it trusts
(`dev_servers`, none by default), and only a frame on one of them is read from there
(app/sourcemaps/dev_modules.py, bounded as for Lookout's own dev server).

Bounded here, once: at most MAX_DEV_SERVERS origins of at most MAX_ORIGIN_CHARS characters, each
http or https, a host and an optional port, nothing else (no user, path, query or fragment).
`origin_of` is the one spelling both sides are compared in: lower-case, the default port dropped.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from app.protocol.addresses import non_global_kind

MAX_DEV_SERVERS = 10
MAX_ORIGIN_CHARS = 200
MAX_TYPED_CHARS = MAX_DEV_SERVERS * (MAX_ORIGIN_CHARS + 1)  # the list as typed, one origin a line
DEFAULT_PORTS = {"http": 80, "https": 443}
# A host name or IPv4 address (letters, digits, dots, dashes), or an IPv6 address as urlsplit gives it.
_HOST = re.compile(r"[a-z0-9](?:[a-z0-9.\-]*[a-z0-9])?|[0-9a-f:.]+")
SHAPE = "an origin such as http://127.0.0.1:3000 (http or https, a host, an optional port, no path)"


def origin_of(url: str) -> str | None:
    """`scheme://host[:port]` of an http(s) URL, lower-case and without its scheme's default port; None
    for any other URL or text (a user name or password in it included)."""
    if not isinstance(url, str) or len(url) > 2048:
        return None
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:  # a port out of range or not a number, a broken IPv6 address
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "")
    if scheme not in DEFAULT_PORTS or not _HOST.fullmatch(host) or "@" in parts.netloc:
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" + ("" if port in (None, DEFAULT_PORTS[scheme]) else f":{port}")


def checked_origin(text: str, number: int = 1) -> str:
    """The origin `text` names (as `origin_of` spells it), or ValueError with a sentence: a path,
    query or fragment is refused, not dropped (`http://host:3000/app` is no origin)."""
    origin = origin_of(text) if isinstance(text, str) and len(text) <= MAX_ORIGIN_CHARS else None
    rest = urlsplit(text.strip()) if origin is not None else None
    if origin is None or rest is None or rest.path not in ("", "/") or text.strip().endswith(("?", "#")) \
            or rest.query or rest.fragment:
        shown = text[:60] + "…" if isinstance(text, str) and len(text) > 60 else text
        raise ValueError(f"The dev server on line {number} ({shown!r}) must be {SHAPE}, at most {MAX_ORIGIN_CHARS} characters.")
    return origin


@dataclass(frozen=True)
class SourceMapOptions:
    """What a project's frames may be mapped with beyond its uploads."""

    dev_servers: tuple[str, ...] = ()  # origins, as `origin_of` spells them

    def checked(self) -> SourceMapOptions:
        """These options with each origin in its one spelling, or ValueError with a sentence."""
        if not isinstance(self.dev_servers, tuple):
            raise ValueError("The dev servers must be a list of origins.")
        if len(self.dev_servers) > MAX_DEV_SERVERS:
            raise ValueError(f"At most {MAX_DEV_SERVERS} dev servers, one a line ({len(self.dev_servers)} given).")
        origins = tuple(checked_origin(text, number) for number, text in enumerate(self.dev_servers, 1))
        return SourceMapOptions(dev_servers=tuple(dict.fromkeys(origins)))  # in order, each once


def origins_of(typed: str) -> tuple[str, ...]:
    """The dev servers as a person typed them, one a line (blank lines skipped), or ValueError with a
    sentence; each is checked when the options are (`SourceMapOptions.checked`)."""
    if not isinstance(typed, str) or len(typed) > MAX_TYPED_CHARS:
        raise ValueError(f"The dev servers are too long: at most {MAX_DEV_SERVERS} lines of {MAX_ORIGIN_CHARS} characters.")
    return tuple(line.strip() for line in typed.splitlines() if line.strip())


def off_loopback(origin: str) -> str | None:
    """Where the dev server at `origin` (as `origin_of` spells it) is when it is not on this machine,
    for a sentence ("on a private address"); None for loopback: `localhost`, 127.0.0.0/8, ::1 (and
    ::ffff:127.x, which connects to 127.x). The kinds are the webhooks' (app/protocol/addresses.py), but
    the rule is narrower: a webhook may go to any public address, a dev server only to this machine."""
    host = urlsplit(origin).hostname or ""
    if host == "localhost":
        return None
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "on a host other than localhost"
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    if ip.is_loopback or (mapped is not None and mapped.is_loopback):
        return None
    kind = non_global_kind(ip)
    if kind is None:
        return "on a public address"
    if ip.version == 6 and "loopback" in kind:  # NAT64 or 6to4: an IPv4 loopback address in it, sent elsewhere
        return "on an IPv6 address that is not loopback"
    return f"on {kind}"
