"""Stand-in for part A's module (branch i26-tokens), replaced when it is merged: who an API token is,
and whether it has a scope."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy


@dataclass(frozen=True)
class ApiCaller:
    user_id: int | None
    name: str
    role: str
    scopes: frozenset[str]
    token_id: int


class ApiAuthError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def _secret(authorization: str | None) -> str:
    scheme, _, secret = (authorization or "").partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


def is_api_token(engine: sqlalchemy.Engine, authorization: str | None) -> bool:
    from app.webapi.tokens import _KEPT
    return _secret(authorization) in _KEPT


def authenticate(engine: sqlalchemy.Engine, authorization: str | None, scope: str) -> ApiCaller:
    from app.webapi.tokens import ApiTokens
    secret = _secret(authorization)
    if not secret:
        raise ApiAuthError(401, "Send an API token: Authorization: Bearer <token>.")
    caller = ApiTokens(engine).caller(secret)
    if not isinstance(caller, ApiCaller):
        raise ApiAuthError(401, "This API token is unknown or revoked.")
    if scope not in caller.scopes:
        raise ApiAuthError(403, f"This token lacks the {scope} scope.")
    return caller
