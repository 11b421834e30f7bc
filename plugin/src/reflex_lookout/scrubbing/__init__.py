"""PII scrubbing before anything is written: Sentry's own scrubber (sentry-relay), its rules as a
project's data-scrubbing options make them (settings, pii_config, relay), what of an item Relay
scrubbed is kept (kept_as_sent), a proof that an item holds nothing those rules match (prefilter),
and a whole envelope scrubbed item by item (envelope)."""
