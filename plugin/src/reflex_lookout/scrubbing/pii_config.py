"""Relay's PII config for a project's scrubbing settings (`pii_config`): the one Sentry's conversion
(`convert_datascrubbing_config`) makes of its options, made once per distinct settings and kept.

Lookout adds to Relay's defaults what Sentry's documented defaults name and the conversion leaves
out (LOOKOUT_RULES): keys holding `bearer`, and `cookie` as a word (the Cookie and Set-Cookie
headers), and the request's URL (its password, and the values of query parameters named like a
credential). Relay reads a URL only with a rule of its own; in Sentry, normalization moves the query
into `query_string` first.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from sentry_relay.processing import convert_datascrubbing_config

from reflex_lookout.scrubbing.settings import ScrubbingSettings

# The key names Sentry's defaults scrub (docs: "Server-Side Data Scrubbing"), for URLs' query parameters.
CREDENTIAL_NAMES = ("password", "secret", "passwd", "api_key", "apikey", "auth", "credentials", "mysql_pwd",
                    "privatekey", "private_key", "token", "bearer")
FILTERED = {"method": "replace", "text": "[Filtered]"}
# Where a log item's bodies go in the event it is scrubbed as (`extra`: scrubbing/relay.py); they
# get the rules Relay gives `$log.body` (LOG_BODIES_SELECTOR).
LOG_BODIES = "lookout_log_bodies"
LOG_BODIES_SELECTOR = f"extra.{LOG_BODIES}.*"


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
