"""Stand-in for part A's module (branch i26-tokens), replaced when it is merged: Sentry's scopes and
what each console role allows."""

from __future__ import annotations

SCOPES = ("org:read", "project:read", "event:read", "event:write", "event:admin")
_READ = frozenset(("org:read", "project:read", "event:read"))


def allowed_scopes(role: str) -> frozenset[str]:
    return frozenset(SCOPES) if role == "maintainer" else _READ if role == "viewer" else frozenset()
