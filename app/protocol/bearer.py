"""What Lookout's two kinds of token share: upload tokens (app/sourcemaps/tokens.py) and API tokens
(app/webapi/tokens.py). A secret is 64 lower-case hex digits (32 random bytes), shown once; only its
SHA-256 is kept, so a request's token is found with one indexed lookup of its hash. It comes in an
`Authorization: Bearer <secret>` header, read bounded."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

MAX_HEADER_CHARS = 200  # of an Authorization header: "Bearer " and 64 hex digits fit with room to spare
MAX_LABEL_CHARS = 100
TOUCH_EVERY_S = 60.0  # a token's last_used_at is written at most this often
SECRET = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, kw_only=True)
class IssuedToken:
    """What every kind of token records beside whose it is, as listed (never its secret)."""

    label: str
    prefix: str  # the secret's first 8 characters
    created_at: float
    created_by: str
    last_used_at: float | None
    revoked_at: float | None


ISSUED = ("label", "prefix", "created_at", "created_by", "last_used_at", "revoked_at")


def issued(row: Any) -> dict[str, Any]:
    """IssuedToken's fields of a database row (one with those columns)."""
    return {name: getattr(row, name) for name in ISSUED}


class BearerRefused(Exception):
    """An Authorization header that holds no bearer secret: the sentence says why."""


def new_secret() -> str:
    return secrets.token_hex(32)


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def day(timestamp: float) -> str:
    """A timestamp as the sentences and the CLIs show it: "2026-11-24 16:05 UTC"."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M UTC")


def label_of(text: str) -> str:
    """A token's label, stripped; `ValueError` with a sentence unless it is one short line."""
    label = text.strip()
    if len(label) > MAX_LABEL_CHARS or not label.isprintable():
        raise ValueError(f"A token's label is one line of at most {MAX_LABEL_CHARS} characters.")
    return label


def bearer_secret(authorization: str | None, kind: str, missing: str) -> str:
    """The secret in an `Authorization: Bearer <secret>` header value (at most MAX_HEADER_CHARS looked
    at), or `BearerRefused` with a sentence: `missing` when there is none, else one naming `kind`
    ("upload token", "API token")."""
    if authorization is not None and len(authorization) > MAX_HEADER_CHARS:
        raise BearerRefused(f"The Authorization header is over {MAX_HEADER_CHARS} characters: an {kind} "
                            "is sent as `Bearer ` and its 64 hex digits.")
    if not authorization or not authorization.strip():
        raise BearerRefused(missing)
    scheme, *rest = authorization.split(None, 1)
    if scheme.lower() != "bearer":
        raise BearerRefused(f"{kind[0].upper()}{kind[1:]}s are sent as `Authorization: Bearer <token>`, not with "
                            f"the {scheme[:20]!r} scheme.")
    if not rest or not rest[0].strip():
        raise BearerRefused(missing)
    return rest[0].strip()
