"""Who a web API request acts as: its `Authorization: Bearer <API token>` (app/webapi/tokens.py),
checked for the scope the endpoint needs. No cookie is ever read: the API answers any origin, and
only a token opens it.

    authenticate(engine, authorization, "event:write") -> ApiCaller     or ApiAuthError:
        401  no token, a malformed header, an unknown, revoked or removed user's token, an upload token
        403  a live token without the scope (or whose user's role no longer allows it)

Synchronous (SQLAlchemy): the endpoints call it in a worker thread. A refusal's sentence never
echoes the token.
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy import select

from app.protocol.bearer import SECRET, BearerRefused, bearer_secret, day, digest
from app.sourcemaps.tables import TOKENS as UPLOAD_TOKENS
from app.webapi.scopes import DOES, SCOPES
from app.webapi.tokens import API_TOKENS, ApiCaller, ApiTokens

HOW_TO_GET_ONE = ("make one on the console's Tokens page or with "
                  "`python -m app.inbox.tokens api NAME`")
NO_TOKEN = f"No API token: send `Authorization: Bearer <token>`; {HOW_TO_GET_ONE}."
UNKNOWN = f"This is not a Lookout API token; {HOW_TO_GET_ONE}."
UPLOAD_TOKEN = ("This is an upload token, which only uploads source maps: the web API takes an API token; "
                f"{HOW_TO_GET_ONE}.")
REMOVED = f"This API token's user no longer exists, so the token no longer works; {HOW_TO_GET_ONE} for a current user."

__all__ = ["ApiAuthError", "ApiCaller", "authenticate", "is_api_token"]


class ApiAuthError(Exception):
    """A request the token does not allow: `status` (401 or 403) and a `message` (a sentence)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _secret(authorization: str | None) -> str:
    try:
        secret = bearer_secret(authorization, "API token", NO_TOKEN)
    except BearerRefused as exc:
        raise ApiAuthError(401, str(exc)) from None
    if not SECRET.fullmatch(secret):
        raise ApiAuthError(401, UNKNOWN)
    return secret


def _has(engine: sqlalchemy.Engine, table: sqlalchemy.Table, secret: str) -> bool:
    with engine.connect() as connection:
        return connection.execute(select(table.c.id).where(table.c.token_sha256 == digest(secret))).first() is not None


def is_api_token(engine: sqlalchemy.Engine, authorization: str | None) -> bool:
    """Whether a request's Authorization header holds an API token (live, revoked or its user gone):
    on the routes the upload API (app/sourcemaps/upload_api.py) serves too, such a request is the web
    API's, and any other (an upload token, none, nonsense) the upload API's."""
    try:
        secret = _secret(authorization)
    except ApiAuthError:
        return False
    return _has(engine, API_TOKENS, secret)


def authenticate(engine: sqlalchemy.Engine, authorization: str | None, scope: str,
                 tokens: ApiTokens | None = None) -> ApiCaller:
    """The caller a request's `Authorization` header value makes, if its token has `scope` (one of
    SCOPES); `ApiAuthError` with a status and a sentence otherwise. `tokens`: the store to check
    against (by default one over `engine` with LOOKOUT_CONSOLE_USERS from the environment)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")  # the endpoint's own mistake, not the client's
    secret = _secret(authorization)
    tokens = ApiTokens(engine) if tokens is None else tokens
    token = tokens.lookup(secret)
    if token is None:
        raise ApiAuthError(401, UPLOAD_TOKEN if _has(engine, UPLOAD_TOKENS, secret) else UNKNOWN)
    role = tokens.role_of(token)
    if role is None:  # its user was removed (which revoked it too): the clearer of the two reasons
        raise ApiAuthError(401, REMOVED)
    if token.revoked_at is not None:
        raise ApiAuthError(401, f"This API token was revoked on {day(token.revoked_at)}; {HOW_TO_GET_ONE}.")
    caller = tokens.use(token, role)
    if scope not in caller.scopes:
        why = (f"its user's role ({role}) does not allow the {scope} scope" if scope in token.scopes
               else f"it lacks the {scope} scope")
        raise ApiAuthError(403, f"This token may not {DOES[scope]}: {why}.")
    return caller
