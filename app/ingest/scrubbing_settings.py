"""A project's PII scrubbing settings: Sentry's data-scrubbing options, on by default as in Sentry.

The project settings page stores and edits them; the inbox's ingest applies them
(app/ingest/scrubbing.py) before anything of an envelope is stored.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScrubbingSettings:
    """Sentry's project options `sentry:scrub_data`, `sentry:scrub_defaults`,
    `sentry:scrub_ip_address`, `sentry:sensitive_fields` and `sentry:safe_fields`.

    - `scrub_data`: scrub at all (off: events are stored as sent).
    - `scrub_defaults`: the default rules (passwords, secrets, tokens and other credentials by their
      keys; credit card numbers, IBANs, PEM keys, URL passwords by their values).
    - `scrub_ip_addresses`: also remove IP addresses (the user's, the request's).
    - `sensitive_fields`: more key names whose values are scrubbed.
    - `safe_fields`: key names (or paths) never scrubbed.
    """

    scrub_data: bool = True
    scrub_defaults: bool = True
    scrub_ip_addresses: bool = False
    sensitive_fields: tuple[str, ...] = ()
    safe_fields: tuple[str, ...] = ()
