"""Sentry's auth forms: the public key an SDK sends with a request, or in its envelope's DSN.

A request names its key in one of four forms, as Relay reads them (relay-server's
`auth_from_parts`):

    X-Sentry-Auth: Sentry sentry_key=<key>, sentry_version=7, ...    (the SDKs, raven)
    Authorization: Sentry sentry_key=<key>, ...                       (the same, another header)
    Authorization: Basic base64(<key>:<secret>)                       (HTTP clients given the DSN's user)
    ?sentry_key=<key>                                                 (browsers, pixel clients)

Two forms in one request are refused, even naming the same key (Relay's "multiple authorization
payloads"): which one counts would otherwise be a guess. An `Authorization` header of another
scheme (Bearer, ...) is no form at all, and neither is a Basic one that does not decode.
"""

from __future__ import annotations

import binascii
from urllib.parse import parse_qs

from reflex_lookout.dsn import Dsn
from reflex_lookout.protocol.asgi import Refused, Scope
from reflex_lookout.settings_error import SettingsError


def sentry_key(scope: Scope) -> str:
    """The public key a request names in one of the four forms ("" when it names none, or its
    one form holds no `sentry_key`). Two forms at once: Refused (400)."""
    forms: list[tuple[str, str]] = []  # (which form, the key it names)
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    if "sentry_key" in query:
        forms.append(("the sentry_key query parameter", query["sentry_key"][0]))
    for name, value in scope["headers"]:
        text = value.decode("latin-1").strip()
        if name == b"x-sentry-auth":
            forms.append(("X-Sentry-Auth", _pairs_key(_without_scheme(text, "sentry") or text)))
        elif name == b"authorization" and (pairs := _without_scheme(text, "sentry")) is not None:
            forms.append(("Authorization: Sentry", _pairs_key(pairs)))
        elif name == b"authorization" and (user := _basic_user(text)) is not None:
            forms.append(("Authorization: Basic", user))
    if len(forms) > 1:
        named = " and ".join(which for which, _ in forms)
        raise Refused(400, f"The request carries multiple authorization payloads ({named}); send the key in one.",
                      "multiple_auth")
    return forms[0][1] if forms else ""


def key_of_dsn(text: str | None, project_id: int) -> str:
    """The public key of DSN `text` when it names `project_id` ("" when it does not, or is no DSN)."""
    if not text:
        return ""
    try:
        dsn = Dsn.parse(text)
    except SettingsError:
        return ""
    return dsn.public_key if dsn.project_id == str(project_id) else ""


def _without_scheme(value: str, scheme: str) -> str | None:
    """What follows `scheme ` at the start of a header value (any case), or None."""
    head, _, rest = value.partition(" ")
    return rest if head.lower() == scheme else None


def _pairs_key(pairs: str) -> str:
    """The `sentry_key` of `sentry_key=..., sentry_version=...` ("" when absent)."""
    for part in pairs.split(","):
        field, _, text = part.strip().partition("=")
        if field.strip() == "sentry_key":
            return text.strip()
    return ""


def _basic_user(value: str) -> str | None:
    """The user of a Basic credential (the DSN's public key), or None when it is no Basic one or
    does not decode to `user:secret`."""
    encoded = _without_scheme(value, "basic")
    if encoded is None:
        return None
    try:
        decoded = binascii.a2b_base64(encoded.strip(), strict_mode=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, colon, _ = decoded.partition(":")
    return user if colon else None
