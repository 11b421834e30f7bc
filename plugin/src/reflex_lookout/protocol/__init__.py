"""Sentry's wire formats and HTTP plumbing the tunnel needs, pure: envelopes, content encodings,
the ASGI helpers, client addresses behind proxies, rate-limit headers and retry delays. Imports
nothing of the host app; Lookout's ingest side (the app this plugin comes from) builds on these."""
