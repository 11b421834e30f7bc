"""Sentry's inbound filters, applied to each error event and transaction at ingest before anything of
it is stored (app/ingest/envelope_reader.py): `dropped_by(item_type, event, options)` names the first of the
project's filters (app/projects/filter_options.py) that matches, in Relay's order, or None.

What each matches follows Relay's `relay-filter` crate (the patterns: app/ingest/filter_patterns.py):

    client_ips          user.ip_address is one of the addresses or inside one of the CIDR ranges
    releases            the release matches one of the globs
    error_messages      an exception's "Type: value" (or its type, or its value), or the message,
                        matches one of the globs
    localhost           user.ip_address is 127.0.0.1 or ::1, or request.url's host is 127.0.0.1 or localhost
    browser_extensions  the first exception's value, or the script of its last frame, is an extension's
    legacy_browsers     the User-Agent's browser is at or below its legacy version
    web_crawlers        the User-Agent is a crawler's
    health_checks       a transaction named like a health check (transactions only)
    react_hydration     an exception's value is React's hydration error (418, 419, 421, 422, 423, 425)
    chunk_load          an exception is webpack's or Turbopack's ChunkLoadError

The client's address is the event's `user.ip_address` (an SDK's "{{auto}}" is not resolved: the outbox
keeps no request address). Only bounded parts of the event are read: at most MAX_EXCEPTIONS
exceptions, strings cut at app/ingest/globs.py's MAX_TEXT, the User-Agent at user_agent.py's bound.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import ua_parser

from app.ingest import filter_patterns as known
from app.ingest.globs import MAX_TEXT, Glob, any_matches, compiled
from app.ingest.user_agent import user_agent
from app.projects.filter_options import LABELS, FilterOptions, network_of
from app.protocol.fields import listed, mapping

logger = logging.getLogger(__name__)
FILTERED_TYPES = ("event", "transaction")  # the items filters apply to; others are kept as before
MAX_EXCEPTIONS = 20
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def dropped_by(item_type: str, event: dict[str, Any], options: FilterOptions) -> str | None:
    """The name of the first filter that drops this event (LABELS order), or None to keep it."""
    if item_type not in FILTERED_TYPES:
        return None
    for name, on in _enabled(options):
        if on(event, options, item_type):
            return name
    return None


def _enabled(options: FilterOptions) -> Iterator[tuple[str, Matcher]]:
    for name in LABELS:
        value = getattr(options, name)
        if value:  # a switch that is on, or a list that is not empty
            yield name, MATCHERS[name]


def _text(value: Any) -> str:
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def _exceptions(event: dict[str, Any]) -> list[dict[str, Any]]:
    values = event.get("exception")
    values = mapping(values).get("values") if isinstance(values, dict) else values  # also a bare list
    return [e for e in listed(values)[:MAX_EXCEPTIONS] if isinstance(e, dict)]


def _messages(event: dict[str, Any]) -> Iterator[str]:
    """Each exception's "Type: value" (its type or its value when it has one only), then the message."""
    for exception in _exceptions(event):
        kind, value = _text(exception.get("type")), _text(exception.get("value"))
        if kind or value:
            yield f"{kind}: {value}" if kind and value else kind or value
    logentry = event.get("logentry") or event.get("message")
    if isinstance(logentry, str):
        yield _text(logentry)
    elif isinstance(logentry, dict):
        yield _text(logentry.get("formatted")) or _text(logentry.get("message"))


def _address(event: dict[str, Any]) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    found = mapping(event.get("user")).get("ip_address")
    if not isinstance(found, str) or len(found) > 64:
        return None
    try:
        return ipaddress.ip_address(found)
    except ValueError:
        return None


@functools.lru_cache(maxsize=256)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(network for entry in entries if (network := network_of(entry)) is not None)


def _client_ips(event: dict[str, Any], options: FilterOptions, _type: str) -> bool:
    address = _address(event)
    return address is not None and any(address in network for network in _networks(options.client_ips)
                                       if network.version == address.version)


def _releases(event: dict[str, Any], options: FilterOptions, _type: str) -> bool:
    release = _text(event.get("release"))
    return bool(release) and any_matches(compiled(options.releases), [release])


def _error_messages(event: dict[str, Any], options: FilterOptions, _type: str) -> bool:
    return any_matches(compiled(options.error_messages), _messages(event))


def _localhost(event: dict[str, Any], _options: FilterOptions, _type: str) -> bool:
    address = _address(event)
    if address is not None and str(address) in known.LOCAL_ADDRESSES:
        return True
    url = _text(mapping(event.get("request")).get("url"))
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return host in known.LOCAL_HOSTS


def _browser_extensions(event: dict[str, Any], _options: FilterOptions, _type: str) -> bool:
    exceptions = _exceptions(event)
    if not exceptions:
        return False
    first = exceptions[0]
    if known.EXTENSION_VALUES.search(_text(first.get("value"))):
        return True
    frames = listed(mapping(first.get("stacktrace")).get("frames"))
    for frame in reversed(frames[-1000:]):
        path = _text(mapping(frame).get("abs_path"))
        if path and path not in known.ANONYMOUS_FRAMES:
            return known.EXTENSION_SOURCES.search(path) is not None
    return False


def _legacy_browsers(event: dict[str, Any], _options: FilterOptions, _type: str) -> bool:
    agent = user_agent(event)
    if not agent:
        return False
    try:
        browser = ua_parser.parse_user_agent(agent)
    except Exception as exc:  # noqa: BLE001 (a header the parser refuses keeps its event)
        logger.warning("the User-Agent of event %r was not parsed: %r", event.get("event_id"), exc)
        return False
    if browser is None or not (browser.major or "").isdigit():
        return False
    newest_legacy = known.LEGACY_BROWSERS.get(known.FAMILY_ALIASES.get(browser.family, browser.family))
    return newest_legacy is not None and int(browser.major) <= newest_legacy  # type: ignore[arg-type]  # isdigit above


def _web_crawlers(event: dict[str, Any], _options: FilterOptions, _type: str) -> bool:
    agent = user_agent(event)
    return bool(agent) and known.WEB_CRAWLERS.search(agent) is not None


def _health_checks(event: dict[str, Any], _options: FilterOptions, item_type: str) -> bool:
    name = _text(event.get("transaction"))
    return item_type == "transaction" and bool(name) and any_matches(known.HEALTH_CHECKS, [name])


def _react_hydration(event: dict[str, Any], _options: FilterOptions, _type: str) -> bool:
    return any_matches(known.REACT_HYDRATION, [_text(e.get("value")) for e in _exceptions(event)])


def _chunk_load(event: dict[str, Any], _options: FilterOptions, _type: str) -> bool:
    return any(_both(kind, value, e) for e in _exceptions(event) for kind, value in known.CHUNK_LOAD)


def _both(kind: Glob, value: Glob, exception: dict[str, Any]) -> bool:
    return kind.matches(_text(exception.get("type"))) and value.matches(_text(exception.get("value")))


Matcher = Callable[[dict[str, Any], FilterOptions, str], bool]
MATCHERS: dict[str, Matcher] = {
    "client_ips": _client_ips, "releases": _releases, "error_messages": _error_messages, "localhost": _localhost,
    "browser_extensions": _browser_extensions, "legacy_browsers": _legacy_browsers, "web_crawlers": _web_crawlers,
    "health_checks": _health_checks, "react_hydration": _react_hydration, "chunk_load": _chunk_load,
}
