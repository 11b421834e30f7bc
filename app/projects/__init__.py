"""Projects and their settings, below both ingest and the inbox: each project's row, key and DSN
(`registry`), and its settings — inbound filters, quotas, source maps (the dataclasses, each in its
module) and PII scrubbing (reflex_lookout.scrubbing.settings) — with their storage (`settings_store`)."""
