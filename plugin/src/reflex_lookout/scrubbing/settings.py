"""A project's PII scrubbing options (Sentry's data-scrubbing settings), set on a Lookout project's
settings page and applied at ingest by Lookout's inbox; this plugin scrubs with the defaults before
the outbox write (scrubbing/envelope.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScrubbingSettings:
    """Sentry's project data-scrubbing options, in the shape `sentry_relay.convert_datascrubbing_config`
    takes them (scrubData, scrubDefaults, scrubIpAddresses, sensitiveFields, excludeFields)."""

    scrub_data: bool = True  # on by default, as in Sentry
    scrub_defaults: bool = True  # the default fields (password, secret, ...), card numbers, IBANs, PEM keys, URL passwords
    scrub_ip_addresses: bool = False
    sensitive_fields: tuple[str, ...] = ()  # extra field names to scrub
    safe_fields: tuple[str, ...] = ()  # field names never scrubbed
