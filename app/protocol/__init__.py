"""Sentry's wire formats and HTTP plumbing, pure: envelopes, content encodings, containers, auth
forms, rate-limit headers, retry delays, client addresses and the ASGI helpers. Imports no domain
package (only app.settings)."""
