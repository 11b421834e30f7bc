"""Sentry's auth forms: the public key an SDK sends with a request (`sentry_key` in the query
string, or in the X-Sentry-Auth header) or in its envelope's DSN."""

from __future__ import annotations

from urllib.parse import parse_qs

from app.protocol.asgi import Scope
from app.settings import Dsn, SettingsError


def sentry_key(scope: Scope) -> str:
    """The public key a request names: its `sentry_key` query parameter, else its X-Sentry-Auth
    header's `sentry_key` ("" when neither does)."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if query.get("sentry_key"):
        return query["sentry_key"][0]
    for name, value in scope["headers"]:
        if name == b"x-sentry-auth":
            for part in value.decode("latin-1").removeprefix("Sentry ").split(","):
                field, _, text = part.strip().partition("=")
                if field == "sentry_key":
                    return text.strip()
    return ""


def key_of_dsn(text: str | None, project_id: int) -> str:
    """The public key of DSN `text` when it names `project_id` ("" when it does not, or is no DSN)."""
    if not text:
        return ""
    try:
        dsn = Dsn.parse(text)
    except SettingsError:
        return ""
    return dsn.public_key if dsn.project_id == str(project_id) else ""
