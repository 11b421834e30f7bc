"""PII scrubbing at ingest, with Sentry's own library, the way Sentry's server uses it.

sentry-relay is Relay's Python API; Sentry's server (`sentry/datascrubbing.py`) calls it the same
way: `convert_datascrubbing_config` turns a project's options (`scrubData`, `scrubDefaults`,
`scrubIpAddresses`, `sensitiveFields`, `excludeFields`) into a PII config, and `pii_strip_event`
applies that config to an event. The config is made once per distinct settings and kept.

Lookout's additions to Relay's defaults: scrubbing/pii_config.py. What is kept of an item (the item
as sent wherever Relay changed nothing): scrubbing/kept_as_sent.py.

Item types: events, transactions and feedback are events to Relay. A log item's lines, in one call:
their bodies as Relay scrubs `$log.body` (its rules for any string, and those for a message), their
attributes as an event's `extra`, keyed by their names; user reports and sessions as `extra` too
(a session's `did` hashed first).
Client reports are an SDK's counts of what it dropped, no one's data: kept as sent. Relay's Python
API takes no other item (attachments, replays, profiles): `SCRUBBED_ITEM_TYPES` are the ones this
module takes. Every item is capped in bytes at intake, so each call's work is bounded; each call also
pays for Relay parsing and compiling the config again (the API keeps none): bench/README.md measures it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sentry_relay.exceptions import RelayError
from sentry_relay.processing import pii_strip_event

from reflex_lookout.scrubbing.kept_as_sent import kept_as_sent
from reflex_lookout.scrubbing.pii_config import LOG_BODIES, pii_config
from reflex_lookout.scrubbing.prefilter import holds_nothing_to_scrub
from reflex_lookout.scrubbing.settings import ScrubbingSettings

EVENT_SHAPED = ("event", "transaction", "feedback")  # items Relay reads as events
SESSIONS = ("session", "sessions")
HASHED_DID = "lookout:"  # a session's `did` once scrubbing hashed it
AS_EXTRA = ("user_report", *SESSIONS, "client_report", "check_in")  # items scrubbed as an event's `extra`
SCRUBBED_ITEM_TYPES = (*EVENT_SHAPED, "log", *AS_EXTRA)
# Where a log item's attributes and its lines' other fields go in the event it is scrubbed as
# (`extra`); its bodies: LOG_BODIES (scrubbing/pii_config.py).
LOG_ATTRIBUTES = "lookout_log_attributes"
LOG_REST, LOG_CONTAINER = "lookout_log_fields", "lookout_log_container"  # a line's other fields; the item's own


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
    kept = kept_as_sent(event, out, out.pop("_meta", None) or {}, settings)
    return kept if isinstance(kept, dict) else {}


def scrub_item(item_type: str, payload: dict[str, Any], settings: ScrubbingSettings,
               sent: bytes | None = None) -> dict[str, Any]:
    """An item's payload (one of SCRUBBED_ITEM_TYPES) scrubbed: the same dict when nothing changed.
    `sent`: the item's JSON as sent, if at hand (see `scrub`)."""
    if item_type in SESSIONS and settings.scrub_data:  # a user's distinct id: counted by its hash
        hashed = _with_hashed_distinct_ids(payload)
        if hashed is not payload:
            return scrub_as_extra(hashed, settings)
    if item_type == "feedback":
        return _scrub_feedback(scrub(payload, settings, sent), settings)
    if item_type in EVENT_SHAPED:
        return scrub(payload, settings, sent)
    if sent is not None and holds_nothing_to_scrub(sent, settings, messages_of(item_type, payload)):
        return payload
    if item_type == "log":
        return _scrub_logs(payload, settings)
    return scrub_as_extra(payload, settings)


def _scrub_feedback(event: dict[str, Any], settings: ScrubbingSettings) -> dict[str, Any]:
    """A feedback item's own words: Relay reads `contexts.feedback` as its feedback context and applies no
    rule inside it, so its message is scrubbed as an event's message (the e-mail and card rules reach it)
    and its other fields (name, contact_email, url, ...) as `extra`, by name (sensitive fields such as
    "email" too). Always asked (no prefilter): feedback is rare, and the prefilter reads messages where
    events have them. The same dict when nothing changed."""
    contexts = event.get("contexts")
    found = contexts.get("feedback") if isinstance(contexts, dict) else None
    if not isinstance(found, dict):
        return event
    message = found.get("message")
    rest = {key: value for key, value in found.items() if key != "message"}
    as_event: dict[str, Any] = {"extra": rest}
    if isinstance(message, str):
        as_event["logentry"] = {"formatted": message}
    scrubbed = scrub(as_event, settings)
    if scrubbed is as_event:
        return event
    words = dict(_dict(scrubbed.get("extra")))
    if isinstance(message, str):
        words["message"] = _dict(scrubbed.get("logentry")).get("formatted", "")
    assert isinstance(contexts, dict)
    return {**event, "contexts": {**contexts, "feedback": {key: words.get(key) for key in found}}}


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


def _as_json(value: Any) -> str | bytes:
    """For `pii_strip_event`: the config is JSON already; an event's lone surrogates (which JSON
    escapes can carry and Relay's parser refuses) become "?", as in Relay's own `_serialize_event`."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "replace")


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


def _with_hashed_distinct_ids(payload: dict[str, Any]) -> dict[str, Any]:
    """A session update with its `did` (a user's distinct id: often an e-mail address or a user id)
    hashed, a session aggregate with the `did` of each of its groups hashed: distinct users can still
    be counted (release health's crash-free users), and the id itself goes nowhere. The same dict
    when there was none to hash."""
    found = payload.get("aggregates")
    groups: list[Any] = found if isinstance(found, list) else []
    grouped = any(isinstance(group, dict) and _unhashed(group.get("did")) for group in groups)
    if not _unhashed(payload.get("did")) and not grouped:
        return payload
    kept = {key: hashed_did(value) if key == "did" else value for key, value in payload.items()}
    if grouped:
        kept["aggregates"] = [{key: hashed_did(value) if key == "did" else value for key, value in group.items()}
                              if isinstance(group, dict) else group for group in groups]
    return kept


def hashed_did(did: Any) -> Any:
    """A user's distinct id as scrubbing leaves it: HASHED_DID and 32 hex digits of its SHA-256; one
    already hashed, or none (not a non-empty string), as it was."""
    if not _unhashed(did):
        return did
    return HASHED_DID + hashlib.sha256(f"reflex-lookout did\0{did}".encode()).hexdigest()[:32]


def _unhashed(did: Any) -> bool:
    return isinstance(did, str) and did != "" and not (did.startswith(HASHED_DID) and len(did) == len(HASHED_DID) + 32)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
