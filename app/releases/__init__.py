"""Releases: the versions events and sessions named, and their health (sessions, crash-free sessions
and users, adoption), as Sentry's release health counts them."""
