"""A project's inbound filters (Sentry's), set on its settings page and applied at ingest before
anything is stored (app/ingest/inbound_filters.py): which filters are on, and the lists a team types
(error-message globs, release globs, client IPs and CIDR ranges).

The lists come from people, so they are bounded here, once: at most MAX_ENTRIES entries of at most
MAX_ENTRY_CHARS characters each; a list that breaks a bound, or an address that is none, is refused
with a sentence naming the entry (`lines_of`, `FilterOptions.checked`)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, fields

MAX_ENTRIES = 50  # globs (or addresses) in one list
MAX_ENTRY_CHARS = 200  # characters in one glob or address
MAX_LIST_CHARS = MAX_ENTRIES * (MAX_ENTRY_CHARS + 1)  # a list as typed, one entry a line

# Each filter by its stored name (Sentry's filter ids where it has one), as the page and the counts
# name it, in the order they are tried (Relay's order; the first that matches counts the drop).
LABELS: dict[str, str] = {
    "client_ips": "Client IP addresses",
    "releases": "Releases",
    "error_messages": "Error messages",
    "localhost": "Events from localhost",
    "browser_extensions": "Errors caused by browser extensions",
    "legacy_browsers": "Legacy browsers",
    "web_crawlers": "Web crawlers",
    "health_checks": "Health-check transactions",
    "react_hydration": "React hydration errors",
    "chunk_load": "ChunkLoadErrors",
}
LISTS = ("error_messages", "releases", "client_ips")  # the filters a list of entries makes
LIST_NAMES = {"error_messages": "error-message glob", "releases": "release glob", "client_ips": "client IP"}


@dataclass(frozen=True)
class FilterOptions:
    """A project's inbound filters; a new project has Sentry's defaults: browser extensions, web
    crawlers and legacy browsers on, the rest off, no lists. A list filter is on when its list is
    not empty."""

    browser_extensions: bool = True
    localhost: bool = False
    web_crawlers: bool = True
    legacy_browsers: bool = True
    health_checks: bool = False
    react_hydration: bool = False
    chunk_load: bool = False
    error_messages: tuple[str, ...] = ()  # globs of "Type: value" or a message, any case
    releases: tuple[str, ...] = ()  # globs of the release, any case
    client_ips: tuple[str, ...] = ()  # addresses and CIDR ranges of `user.ip_address`

    def checked(self) -> FilterOptions:
        """These options, or ValueError with a sentence naming what is wrong."""
        for name in SWITCHES:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"The filter {LABELS[name]} must be on or off.")
        for name in LISTS:
            entries = getattr(self, name)
            if not isinstance(entries, tuple) or not all(isinstance(entry, str) for entry in entries):
                raise ValueError(f"The {LIST_NAMES[name]}s must be a list of text.")
            _check_list(name, entries)
        return self


SWITCHES = tuple(f.name for f in fields(FilterOptions) if f.name not in LISTS)


def lines_of(name: str, typed: str) -> tuple[str, ...]:
    """The entries of list `name` as typed in a text area (one a line; blank lines and surrounding
    spaces go), or ValueError with a sentence."""
    if len(typed) > MAX_LIST_CHARS:
        raise ValueError(f"The {LIST_NAMES[name]}s are too long: at most {MAX_ENTRIES} lines of "
                         f"{MAX_ENTRY_CHARS} characters.")
    entries = tuple(line.strip() for line in typed.splitlines() if line.strip())
    _check_list(name, entries)
    return entries


def _check_list(name: str, entries: tuple[str, ...]) -> None:
    what = LIST_NAMES[name]
    if len(entries) > MAX_ENTRIES:
        raise ValueError(f"At most {MAX_ENTRIES} {what}s, one a line ({len(entries)} given).")
    for number, entry in enumerate(entries, 1):
        if not entry or len(entry) > MAX_ENTRY_CHARS:
            raise ValueError(f"The {what} on line {number} must have 1 to {MAX_ENTRY_CHARS} characters.")
        if name == "client_ips" and network_of(entry) is None:
            raise ValueError(f"The client IP on line {number} ({entry[:60]!r}) is no IP address or CIDR range "
                             "(like 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32).")


def network_of(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    """An address ("203.0.113.7", a network of one) or a CIDR range ("10.0.0.0/8"), else None."""
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None
