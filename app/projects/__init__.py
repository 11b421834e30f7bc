"""Projects and their options, below both ingest and the inbox: each project's row, key and DSN
(`registry`), and its options — inbound filters, quotas, source maps (the dataclasses, each in its
module) and PII scrubbing (reflex_lookout.scrubbing.settings) — with their storage (`options_store`)."""
