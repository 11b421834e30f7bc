"""Sentry's wire formats on the ingest side, pure: containers, auth forms, the /store/ bodies,
payloads, fields, security reports. The envelope, encodings, ASGI helpers, client addresses,
rate-limit headers and retry delays the tunnel needs too are the plugin's (reflex_lookout/protocol/).
Imports no domain package (only app.settings)."""
