"""PII scrubbing at ingest, with Sentry's own library, the way Sentry's server uses it.

sentry-relay is Relay's Python API; Sentry's server (`sentry/datascrubbing.py`) calls it the same
way: `convert_datascrubbing_config` turns a project's options (`scrubData`, `scrubDefaults`,
`scrubIpAddresses`, `sensitiveFields`, `excludeFields`) into a PII config, and `pii_strip_event`
applies that config to an event. The config is made once per distinct settings and kept.

Lookout adds to Relay's defaults what Sentry's documented defaults name and the conversion leaves
out (LOOKOUT_RULES): keys holding `bearer`, and `cookie` as a word (the Cookie and Set-Cookie
headers), and the request's URL (its password, and the values of query parameters named like a
credential). Relay reads a URL only with a rule of its own; in Sentry, normalization moves the query
into `query_string` first.

What is kept of an item is the item as sent, except where Relay scrubbed, removed, trimmed or refused
a value (its remarks in `_meta` say where), or did not keep one (a legacy key it moved, an unknown
key where it takes none): there Relay's output is kept, or nothing. So an item Relay found nothing
in stays byte for byte as sent (`scrub` returns the very same dict), and its shapes (headers as a
dict, exceptions as a list) stay what the SDK sent wherever Relay changed nothing.

Item types: events, transactions and feedback are events to Relay. A log item's lines, in one call:
their bodies as Relay scrubs `$log.body` (its rules for any string, and those for a message), their
attributes as an event's `extra`, keyed by their names; user reports and sessions as `extra` too.
Client reports are an SDK's counts of what it dropped, no one's data: kept as sent. Relay's Python
API takes no other item (attachments, replays, profiles): `SCRUBBED_ITEM_TYPES` are the ones this
module takes. Every item is capped in bytes at intake, so each call's work is bounded; each call also
pays for Relay parsing and compiling the config again (the API keeps none): bench/README.md measures it.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from sentry_relay.exceptions import RelayError
from sentry_relay.processing import convert_datascrubbing_config, pii_strip_event

from reflex_lookout.scrubbing.prefilter import holds_nothing_to_scrub
from reflex_lookout.scrubbing.settings import ScrubbingSettings

EVENT_SHAPED = ("event", "transaction", "feedback")  # items Relay reads as events
SESSIONS = ("session", "sessions")
AS_EXTRA = ("user_report", *SESSIONS, "client_report")  # items scrubbed as an event's `extra`
SCRUBBED_ITEM_TYPES = (*EVENT_SHAPED, "log", *AS_EXTRA)
# The key names Sentry's defaults scrub (docs: "Server-Side Data Scrubbing"), for URLs' query parameters.
CREDENTIAL_NAMES = ("password", "secret", "passwd", "api_key", "apikey", "auth", "credentials", "mysql_pwd",
                    "privatekey", "private_key", "token", "bearer")
FILTERED = {"method": "replace", "text": "[Filtered]"}
# Where a log item's bodies and attributes go in the event it is scrubbed as (`extra`); the bodies
# get the rules Relay gives `$log.body` (LOG_BODIES_SELECTOR).
LOG_BODIES, LOG_ATTRIBUTES = "lookout_log_bodies", "lookout_log_attributes"
LOG_REST, LOG_CONTAINER = "lookout_log_fields", "lookout_log_container"  # a line's other fields; the item's own
LOG_BODIES_SELECTOR = f"extra.{LOG_BODIES}.*"
_GONE = object()  # no value at this place of Relay's output


class UnscrubbableItem(ValueError):
    """Relay refused the item: the envelope is rejected (and its row keeps no body)."""


def scrub(event: dict[str, Any], settings: ScrubbingSettings, sent: bytes | None = None) -> dict[str, Any]:
    """`event` scrubbed under `settings`: the same dict when there was nothing to scrub, else a new
    one (`event` itself is left as it was). `sent`: the JSON `event` was read from, if at hand: when
    it provably holds nothing any rule matches (scrubbing/prefilter.py), Relay is not asked."""
    config = pii_config(settings)
    if config is None:
        return event
    if "_meta" in event:  # an SDK's remarks are Relay's to read, not data: never kept
        event = {key: value for key, value in event.items() if key != "_meta"}
    if sent is not None and holds_nothing_to_scrub(sent, settings, messages_of("event", event)):
        return event
    try:
        out = pii_strip_event(config, event, json_dumps=_as_json)
    except RelayError as exc:  # its message may quote the item, and carries a Rust backtrace: its kind only
        raise UnscrubbableItem(f"The item could not be scrubbed ({type(exc).__name__}).") from None
    kept = _kept(event, out, out.pop("_meta", None) or {}, _Clean(settings))
    return kept if isinstance(kept, dict) else {}


def scrub_item(item_type: str, payload: dict[str, Any], settings: ScrubbingSettings,
               sent: bytes | None = None) -> dict[str, Any]:
    """An item's payload (one of SCRUBBED_ITEM_TYPES) scrubbed: the same dict when nothing changed.
    `sent`: the item's JSON as sent, if at hand (see `scrub`)."""
    if item_type in SESSIONS and settings.scrub_data:  # a user's distinct id: the inbox counts sessions without it
        without = _without_distinct_ids(payload)
        if without is not payload:
            return scrub_as_extra(without, settings)
    if item_type in EVENT_SHAPED:
        return scrub(payload, settings, sent)
    if sent is not None and holds_nothing_to_scrub(sent, settings, messages_of(item_type, payload)):
        return payload
    if item_type == "log":
        return _scrub_logs(payload, settings)
    return scrub_as_extra(payload, settings)


def messages_of(item_type: str, payload: dict[str, Any]) -> bytes | None:
    """The JSON of an item's values Relay reads as messages, where its e-mail rule applies
    (scrubbing/prefilter.py): an event's `message`, `logentry` and the legacy keys Relay moves there;
    a log item's bodies; in anything scrubbed as an event's `extra` (`scrub_as_extra`: other items,
    headers), what sits where Lookout puts log bodies. None: not known (an e-mail address counts
    anywhere in the item)."""
    if item_type in EVENT_SHAPED:
        return json.dumps([value for key, value in payload.items()
                           if "message" in key.lower() or "logentry" in key.lower()]).encode()
    if item_type != "log":
        return json.dumps(payload.get(LOG_BODIES)).encode()
    lines = payload.get("items")
    if not isinstance(lines, list) or not all(isinstance(line, dict) for line in lines):
        return None
    return json.dumps([line.get("body") for line in lines]).encode()


def scrub_as_extra(payload: dict[str, Any], settings: ScrubbingSettings, sent: bytes | None = None) -> dict[str, Any]:
    """`payload` scrubbed as an event's `extra` (any JSON object that is not an event): the same dict
    when nothing changed. `sent`: its JSON, if at hand (see `scrub`)."""
    if sent is not None and holds_nothing_to_scrub(sent, settings, messages_of("extra", payload)):
        return payload
    as_event = {"extra": payload}
    scrubbed = scrub(as_event, settings)
    return payload if scrubbed is as_event else _dict(scrubbed.get("extra"))


@functools.lru_cache(maxsize=256)
def pii_config(settings: ScrubbingSettings) -> str | None:
    """Relay's PII config for `settings` as JSON (None: nothing to scrub), made once per settings."""
    config = convert_datascrubbing_config(_options(settings))
    applications = config.get("applications") or {}
    defaults = next((selector for selector, rules in applications.items() if "@common:filter" in rules), None)
    messages = next((rules for selector, rules in applications.items() if "$log.body" in selector.split(" || ")), None)
    if messages is not None:  # a log line's body, as Relay scrubs it (beside the rules for any string)
        applications[LOG_BODIES_SELECTOR] = messages
    if defaults is not None:  # scrubDefaults: Lookout's rules beside Relay's, with the same safe fields left out
        names = "|".join(map(re.escape, (*CREDENTIAL_NAMES, *settings.sensitive_fields)))
        config["rules"] = {**config.get("rules", {}), **LOOKOUT_RULES,
                           "lookout:url-query": {**URL_QUERY, "pattern": URL_QUERY["pattern"].format(names=names)}}
        applications[defaults] = [*applications[defaults], "lookout:fields"]
        applications[f"$http.url{_safe_fields_excluded(defaults)}"] = ["@urlauth:legacy", "lookout:url-query"]
    return json.dumps(config) if applications else None


LOOKOUT_RULES: dict[str, dict[str, Any]] = {
    # `bearer` anywhere in a key; `cookie` as a word: the Cookie and Set-Cookie headers, as named
    # anywhere (`b'cookie'` in an ASGI scope), but not `request.cookies`, whose session cookies Relay knows
    "lookout:fields": {"type": "redact_pair", "keyPattern": r"(?i)bearer|\bcookie\b", "redaction": FILTERED},
}
# A query parameter's value (group 1) in a URL, when its name holds one of `names`.
URL_QUERY: dict[str, Any] = {
    "type": "pattern", "pattern": r"(?i)[?&;][^=&#;]*(?:{names})[^=&#;]*=([^&#;]*)", "replaceGroups": [1],
    "redaction": FILTERED,
}


def _options(settings: ScrubbingSettings) -> dict[str, Any]:
    """The settings as the options Sentry gives the conversion (`get_datascrubbing_settings`)."""
    return {"scrubData": settings.scrub_data, "scrubDefaults": settings.scrub_defaults,
            "scrubIpAddresses": settings.scrub_ip_addresses, "sensitiveFields": list(settings.sensitive_fields),
            "excludeFields": list(settings.safe_fields)}


@functools.cache
def _defaults_selector() -> str:
    """The selector of Relay's default rules when no field is safe."""
    applications = convert_datascrubbing_config({"scrubData": True, "scrubDefaults": True})["applications"]
    return next(selector for selector, rules in applications.items() if "@common:filter" in rules)


def _safe_fields_excluded(defaults: str) -> str:
    """The ` && !<field>` terms Relay appended to its defaults' selector for the safe fields, as Relay
    quoted them."""
    plain = _defaults_selector()
    return defaults[len(plain):] if defaults.startswith(plain) else ""


def _as_json(value: Any) -> str | bytes:
    """For `pii_strip_event`: the config is JSON already; an event's lone surrogates (which JSON
    escapes can carry and Relay's parser refuses) become "?", as in Relay's own `_serialize_event`."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "replace")


class _Clean:
    """Whether a value Relay changed without any rule's remark (a legacy key it moved, a value of a
    type it refuses, an unknown key where it takes none) may be kept as sent: when it holds nothing
    any rule of the settings matches (scrubbing/prefilter.py, on its JSON). So an item the prefilter
    finds clean is kept exactly as Relay's full path would keep it: as sent."""

    def __init__(self, settings: ScrubbingSettings) -> None:
        self.settings = settings

    def __call__(self, value: Any) -> bool:
        # No message of Relay's (where its e-mail rule applies) is such a value: as the item's own
        # prefilter asks (`messages_of`), an e-mail address here alone does not send it to Relay.
        return _holds_nothing(value) or holds_nothing_to_scrub(json.dumps(value).encode(), self.settings, b"[]")


def _kept(sent: Any, out: Any, meta: dict[str, Any], clean: _Clean) -> Any:
    """What is kept of `sent`, a value as the SDK sent it, given `out`, Relay's output at the same
    place (_GONE: none), and `meta`, Relay's `_meta` there: `sent` itself where Relay changed
    nothing in it, else a copy with Relay's values where it changed them; _GONE for nothing."""
    if "" in meta:  # a remark on this very value: scrubbed, removed, trimmed or refused
        if out == sent or (not _by_a_rule(meta[""]) and clean(sent)):
            return sent
        return out
    if out is _GONE or out is None:  # Relay did not keep it (unknown where it takes no unknown key, or moved)
        return sent if clean(sent) else out
    if isinstance(out, dict | list):
        if isinstance(sent, dict):
            return _kept_dict(sent, out, meta, clean)
        if isinstance(sent, list):
            return _kept_list(sent, out, meta, clean)
        return out if meta else sent  # a string Relay read as parts (a query string, cookies), scrubbed within
    if isinstance(sent, list) and not meta and not any(isinstance(v, dict | list) for v in sent):
        return sent  # a header's values, which Relay joins into one string and found nothing in
    return out if isinstance(sent, dict | list) else sent  # else: Relay's type for the same value (42 as "42")


def _by_a_rule(remarks: Any) -> bool:
    """Whether Relay's remarks on a value name a rule that changed it (not only an error of its own,
    `err`, or one of its internal remarks, whose rule ids start with "!")."""
    found = remarks.get("rem") if isinstance(remarks, dict) else None
    if not isinstance(found, list):
        return False
    return any(not (isinstance(remark, list) and remark and str(remark[0]).startswith("!")) for remark in found)


def _holds_nothing(value: Any) -> bool:
    """None, "", or containers of nothing (what Relay leaves out of its output: `{"frames": []}`)."""
    if isinstance(value, dict):
        return all(_holds_nothing(v) for v in value.values())
    if isinstance(value, list):
        return all(_holds_nothing(v) for v in value)
    return value is None or value == ""


def _kept_dict(sent: dict[str, Any], out: Any, meta: dict[str, Any], clean: _Clean) -> Any:
    if isinstance(out, list):  # headers, tags, cookies: Relay writes a mapping as [name, value] pairs
        found = _pairs(out, meta)
        if found is None:
            return out
        out, meta = found
    kept = None  # a copy, made at the first change
    matched = set()
    for key, value in sent.items():
        name = _name(out, key)
        matched.add(name)
        if value is None:
            continue
        child = _kept(value, out.get(name, _GONE), meta.get(name) or {}, clean)
        if child is value:
            continue
        kept = dict(sent) if kept is None else kept
        if child is _GONE:
            del kept[key]
        else:
            kept[key] = child
    if kept is None:
        return sent
    # Something changed here: what Relay moved under a new key (a legacy name's value) comes along.
    kept.update((name, value) for name, value in out.items() if name not in matched and value is not None)
    return kept


def _name(out: dict[str, Any], key: str) -> str:
    """`key` as `out` names it: Relay writes header names in title case ("content-type" becomes
    "Content-Type"), so a name not found as sent is the one equal to it but for case, if alone."""
    if key in out:
        return key
    found = [name for name in out if name.lower() == key.lower()]
    return found[0] if len(found) == 1 else key


def _pairs(out: list[Any], meta: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Relay's [name, value] pairs as a mapping by name, with their values' remarks; None when `out`
    is not pairs, or names one twice (two headers sent as "X-A" and "x-a")."""
    values: dict[str, Any] = {}
    remarks: dict[str, Any] = {}
    for index, pair in enumerate(out):
        if not _is_pair(pair) or pair[0] in values:
            return None
        on_pair = meta.get(str(index)) or {}
        values[pair[0]] = pair[1]
        whole = on_pair.get("") or on_pair.get("0")  # a remark on the pair, or on its name
        remarks[pair[0]] = {"": whole} if whole else on_pair.get("1") or {}
    return values, remarks


def _kept_list(sent: list[Any], out: Any, meta: dict[str, Any], clean: _Clean) -> Any:
    if isinstance(out, dict) and isinstance(out.get("values"), list):  # Relay's {"values": [...]} of a bare list
        out, meta = out["values"], meta.get("values") or {}
    if not isinstance(out, list) or len(out) != len(sent) or not _aligned(sent, out):
        return out
    kept = None
    for index, value in enumerate(sent):
        child = _kept(value, out[index], meta.get(str(index)) or {}, clean)
        if child is not value:
            kept = list(sent) if kept is None else kept
            kept[index] = None if child is _GONE else child
    return sent if kept is None else kept


def _aligned(sent: list[Any], out: list[Any]) -> bool:
    """Whether Relay kept the list's order: pairs it sorted by name are not read index by index."""
    return all(not (_is_pair(s) and _is_pair(o)) or s[0].lower() == o[0].lower() for s, o in zip(sent, out, strict=True))


def _is_pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)


def _scrub_logs(container: dict[str, Any], settings: ScrubbingSettings) -> dict[str, Any]:
    """A log item (`{"items": [...]}`), in one call: the lines' bodies as Relay scrubs `$log.body`
    (its rules for any string, then those for a message: LOG_BODIES), their attributes' values as an
    event's `extra`, by name, and every other field of each line as `extra` too (LOG_REST). What is
    not a line (keys of the container besides `items`) is scrubbed as `extra` as well."""
    lines = container.get("items")
    if not isinstance(lines, list):
        return scrub_as_extra(container, settings)
    records = [line if isinstance(line, dict) else {} for line in lines]
    attributes = [_dict(record.get("attributes")) for record in records]
    sent: dict[str, list[Any]] = {
        LOG_BODIES: [record.get("body") for record in records],
        LOG_ATTRIBUTES: [{name: _attribute_value(value) for name, value in found.items()} for found in attributes],
        LOG_REST: [{k: v for k, v in record.items() if k not in ("body", "attributes")} for record in records],
    }
    others = {key: value for key, value in container.items() if key != "items"}
    as_event = {"extra": {**sent, LOG_CONTAINER: others}}
    scrubbed = scrub(as_event, settings)
    if scrubbed is as_event:
        return container
    extra = _dict(scrubbed.get("extra"))
    bodies, values, rests = extra.get(LOG_BODIES), extra.get(LOG_ATTRIBUTES), extra.get(LOG_REST)
    if not (isinstance(bodies, list) and isinstance(values, list) and isinstance(rests, list)
            and len(bodies) == len(values) == len(rests) == len(lines)):
        raise UnscrubbableItem("The log item could not be scrubbed.")
    kept = list(lines)
    for index, record in enumerate(records):
        rest = rests[index] if isinstance(rests[index], dict) else {}
        if (bodies[index] is sent[LOG_BODIES][index] and values[index] is sent[LOG_ATTRIBUTES][index]
                and rest is sent[LOG_REST][index]):
            continue
        line = kept[index] = {**rest, "body": bodies[index]} if "body" in record else dict(rest)
        was, now = sent[LOG_ATTRIBUTES][index], _dict(values[index])
        if "attributes" in record:
            line["attributes"] = record["attributes"] if now is was else {
                name: attribute if now.get(name) is was[name] else _with_value(attribute, now.get(name))
                for name, attribute in attributes[index].items()}
    container_now = extra.get(LOG_CONTAINER)
    return {**(container_now if isinstance(container_now, dict) else {}), "items": kept}


def _attribute_value(attribute: Any) -> Any:
    """A log attribute's value: SDKs send {"value": ..., "type": ...}, or the value bare."""
    return attribute.get("value") if isinstance(attribute, dict) and "value" in attribute else attribute


def _with_value(attribute: Any, value: Any) -> Any:
    return {**attribute, "value": value} if isinstance(attribute, dict) and "value" in attribute else value


def _without_distinct_ids(payload: dict[str, Any]) -> dict[str, Any]:
    """A session update without `did` (a user's distinct id), a session aggregate without the `did`
    of each of its groups: the same dict when there was none."""
    found = payload.get("aggregates")
    groups: list[Any] = found if isinstance(found, list) else []
    grouped = any(isinstance(group, dict) and "did" in group for group in groups)
    if "did" not in payload and not grouped:
        return payload
    kept = {key: value for key, value in payload.items() if key != "did"}
    if grouped:
        kept["aggregates"] = [{key: value for key, value in group.items() if key != "did"}
                              if isinstance(group, dict) else group for group in groups]
    return kept


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
