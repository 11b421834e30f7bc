"""Sentry's browser, os and device contexts, and their tags, from an event's `User-Agent` header,
where the SDK sent none: Relay fills them for Sentry (the browser SDK sends the request's
`User-Agent`, not these contexts), and the store does it for the inbox (app/ingest/envelope_reader.py), before
the event is grouped, stored and its tags counted (app/inbox/tag_index.py).

Parsed with ua-parser, the maintained Python implementation of uap-core's rules (the rules Relay
parses with too; they come in ua-parser-builtins), on its Rust engine ua-parser-rs: linear-time
regexes, so no header can make matching backtrack. Its global parser is built once, at the first
event, and caches its recent answers. The header is read only as a string, at most
`MAX_USER_AGENT` characters of it.

Filled, each only if the event lacks it: `contexts.browser` (`name`, `version`), `contexts.os`
(`name`, `version`), `contexts.device` (`family`, `model`, `brand`; not for a device the rules do not
know), and the tags Sentry derives from them: `browser` ("Chrome 126.0.0"), `browser.name`, `os`
("Windows 10"), `os.name`, `device` (the model) and `device.family`. A context or tag the SDK sent wins.

`contexts_from_user_agent` says what to add and `add_contexts` adds it: an event that came through
the outbox is kept as sent with what was added (app/sourcemaps/event_patch.py), and read back through
`add_contexts` again.
"""

from __future__ import annotations

import logging
from typing import Any

import ua_parser

from app.inbox.tag_index import Tag, bounded, named
from app.protocol.fields import mapping, text

logger = logging.getLogger(__name__)
MAX_USER_AGENT = 512  # characters read of the header; a browser's is under 300
HEADER = "user-agent"
UNKNOWN = "Other"  # uap-core's family of what no rule names
CONTEXTS = ("browser", "os", "device")  # the contexts a User-Agent gives


def fill_from_user_agent(event: dict[str, Any]) -> bool:
    """Add the contexts and tags the event's `User-Agent` gives and the event lacks; whether any were."""
    added = contexts_from_user_agent(event)
    add_contexts(event, added)
    return bool(added)


def contexts_from_user_agent(event: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The contexts the event's `User-Agent` gives and the event lacks, by name ({}: none)."""
    contexts = event.get("contexts")
    if contexts is not None and not isinstance(contexts, dict):
        return {}  # not Sentry's shape: left as sent
    missing = [name for name in CONTEXTS if mapping(contexts).get(name) is None]
    agent = user_agent(event) if missing else ""
    if not agent:
        return {}
    try:
        parsed = ua_parser.parse(agent)
    except Exception as exc:  # noqa: BLE001 (a header the parser refuses costs the event its contexts, nothing else)
        logger.warning("the User-Agent of event %r was not parsed: %r", event.get("event_id"), exc)
        return {}
    return {name: context for name, context in described(parsed).items() if name in missing}


def add_contexts(event: dict[str, Any], added: dict[str, dict[str, str]]) -> None:
    """Add the contexts `contexts_from_user_agent` gave, and their tags, to the event: at ingest, and
    again when an event kept as sent with what ingest added is read back (app/sourcemaps/event_patch.py)."""
    if not added:
        return
    event["contexts"] = {**mapping(event.get("contexts")), **added}
    _add_tags(event, [tag for name, context in added.items() for tag in _tags(name, context)])


def user_agent(event: dict[str, Any]) -> str:
    """The `User-Agent` of `request.headers` (an object or a list of [name, value] pairs; the name in
    any case), cut at MAX_USER_AGENT characters; "" when there is none or it is not a string."""
    headers = mapping(event.get("request")).get("headers")
    value: Any = None
    if isinstance(headers, dict):
        value = headers.get("User-Agent")
        if value is None:
            value = next((v for k, v in headers.items() if _is_header(k)), None)
    elif isinstance(headers, list):
        value = next((pair[1] for pair in headers
                      if isinstance(pair, (list, tuple)) and len(pair) == 2 and _is_header(pair[0])), None)
    return text(value[:MAX_USER_AGENT]).strip() if isinstance(value, str) else ""


def described(parsed: ua_parser.Result) -> dict[str, dict[str, str]]:
    """The browser, os and device contexts Relay makes of a parse, for what the rules know."""
    found: dict[str, dict[str, str]] = {}
    browser, os_, device = parsed.user_agent, parsed.os, parsed.device
    if browser is not None and browser.family != UNKNOWN:
        found["browser"] = _context(browser.family, _version(browser.major, browser.minor, browser.patch), "browser")
    if os_ is not None and os_.family != UNKNOWN:
        found["os"] = _context(os_.family, _version(os_.major, os_.minor, os_.patch), "os")
    if device is not None and device.family != UNKNOWN:
        found["device"] = {"family": device.family, **({"model": device.model} if device.model else {}),
                           **({"brand": device.brand} if device.brand else {}), "type": "device"}
    return found


def _is_header(name: Any) -> bool:
    return isinstance(name, str) and len(name) == len(HEADER) and name.lower() == HEADER


def _version(major: str | None, minor: str | None, patch: str | None) -> str:
    """"126.0.0": the parts there are, each only after the one before it (Relay's `get_version`)."""
    parts = []
    for part in (major, minor, patch):
        if not part:
            break
        parts.append(part)
    return ".".join(parts)


def _context(name: str, version: str, kind: str) -> dict[str, str]:
    return {"name": name, **({"version": version} if version else {}), "type": kind}


def _tags(name: str, context: dict[str, str]) -> list[Tag]:
    """Sentry's tags of a context made here: as tag_index.derived_tags reads them, plus `device.family`."""
    if name == "device":
        pairs = [("device", context.get("model")), ("device.family", context.get("family"))]
    else:
        pairs = [(name, named(context)), (f"{name}.name", context["name"])]
    return [tag for key, value in pairs if (tag := bounded(key, value)) is not None]


def _add_tags(event: dict[str, Any], tags: list[Tag]) -> None:
    """Add `tags` to the event's own (an object, or a list of pairs), but no key it has already;
    own tags of another shape are left as sent."""
    own = event.get("tags")
    if own is None and tags:
        event["tags"] = dict(tags)
    elif isinstance(own, dict):
        for key, value in tags:
            own.setdefault(key, value)
    elif isinstance(own, list):
        present = {text(pair[0]) for pair in own if isinstance(pair, (list, tuple)) and len(pair) == 2}
        own.extend([key, value] for key, value in tags if key not in present)
