"""Sentry's scopes, as far as Lookout has them, and the scopes each console role allows.

A token's scopes are fixed when it is made, within what its user's role allowed then; each request
gets them intersected with what the role allows now (app/webapi/auth.py), so a maintainer made a
viewer loses their tokens' write scopes at once."""

from __future__ import annotations

from app.console.accounts import ROLES

SCOPES = ("org:read", "project:read", "event:read", "event:write", "event:admin")  # Sentry's names
READ_SCOPES = SCOPES[:3]
# What a scope lets a request do, for the 403 sentence ("This token may not …") and the Tokens page.
DOES = {
    "org:read": "read the organization and its members",
    "project:read": "read projects and releases",
    "event:read": "read issues, events, tags and activity",
    "event:write": "change issues (status, assignment, notes, merge)",
    "event:admin": "delete issues",
}
_BY_ROLE = {"viewer": frozenset(READ_SCOPES), "maintainer": frozenset(SCOPES)}
assert set(_BY_ROLE) == set(ROLES) and set(DOES) == set(SCOPES)


def allowed_scopes(role: str) -> frozenset[str]:
    """The scopes a console role allows (none for a role Lookout does not know)."""
    return _BY_ROLE.get(role, frozenset())


def ordered(scopes: frozenset[str] | set[str]) -> tuple[str, ...]:
    """Scopes in SCOPES's order (how they are stored and shown)."""
    return tuple(scope for scope in SCOPES if scope in scopes)
