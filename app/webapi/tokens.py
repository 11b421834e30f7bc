"""API tokens: what lets a script, `sentry-cli issues` or Sentry's MCP server use Lookout's web API
(app/webapi/auth.py) as one console user, within Sentry's scopes (app/webapi/scopes.py).

A token belongs to a console user: a database user or one of LOOKOUT_CONSOLE_USERS (working while
the name is there). A database user's token is tied to their row: removing the user revokes it in
the same transaction (app/console/accounts.py), and since a console_user id is never handed out
again (AUTOINCREMENT on SQLite, a sequence on PostgreSQL) a user added later under the same name is
another row, which no earlier token names. Its scopes are at most what the user's role allows; each
request gets them cut to what the role allows then. The secret is 64 lower-case hex digits, shown once; only its
SHA-256 is kept (app/protocol/bearer.py), and a revoked token stays listed with its date. Made and
revoked on the console's /tokens page or with `python -m app.inbox.tokens api NAME` (app/webapi/cli.py).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from itertools import islice

import sqlalchemy
from sqlalchemy import insert, select, update

from app import db
from app.console.accounts import MAX_NAME_CHARS, USERS, env_users
from app.console.models import ApiToken
from app.protocol.bearer import TOUCH_EVERY_S, IssuedToken, digest, issued, label_of, new_secret
from app.tables import table_of
from app.webapi.scopes import SCOPES, allowed_scopes, ordered

API_TOKENS = table_of(ApiToken)
MAX_SCOPES = len(SCOPES)  # scopes a request to make a token may name (each at most once)


@dataclass(frozen=True)
class ApiTokenRow(IssuedToken):
    id: int
    user_name: str
    user_id: int | None  # the console_user row it was made for; None for a LOOKOUT_CONSOLE_USERS user
    scopes: tuple[str, ...]  # in SCOPES's order


@dataclass(frozen=True)
class ApiCaller:
    """Who a request with a live API token acts as."""

    user_id: int | None  # the console user's id if it has one (LOOKOUT_CONSOLE_USERS users have none)
    name: str  # the console user's name
    role: str  # "viewer" | "maintainer": the user's role now, read at each request
    scopes: frozenset[str]  # the token's scopes, cut to what that role allows
    token_id: int


COLUMNS = (API_TOKENS.c.id, API_TOKENS.c.user_name, API_TOKENS.c.user_id, API_TOKENS.c.scopes, API_TOKENS.c.label,
           API_TOKENS.c.prefix, API_TOKENS.c.created_at, API_TOKENS.c.created_by, API_TOKENS.c.last_used_at,
           API_TOKENS.c.revoked_at)


def _row(row: sqlalchemy.Row) -> ApiTokenRow:
    return ApiTokenRow(row.id, row.user_name, row.user_id, tuple(row.scopes.split()), **issued(row))


def scopes_for(role: str, asked: Collection[str] | None) -> tuple[str, ...]:
    """The scopes of a new token for a user of `role`: all the role allows when `asked` is None, else
    `asked` in SCOPES's order; `ValueError` with a sentence for an unknown scope, one the role does
    not allow, or none."""
    allowed = allowed_scopes(role)
    if asked is None:
        return ordered(allowed)
    asked = [asked] if isinstance(asked, str) else builtins.list(islice(asked, MAX_SCOPES + 1))
    unknown = [s for s in asked if not isinstance(s, str) or s not in SCOPES]
    if unknown or len(asked) > MAX_SCOPES:
        shown = str(unknown[0])[:40] if unknown else "more"
        raise ValueError(f"There is no scope {shown!r}: a token's scopes are among {', '.join(SCOPES)}.")
    beyond = [s for s in ordered(set(asked)) if s not in allowed]
    if beyond:
        raise ValueError(f"A {role}'s token may not have {', '.join(beyond)}: the {role} role allows "
                         f"{', '.join(ordered(allowed))}.")
    if not asked:
        raise ValueError("A token needs at least one scope.")
    return ordered(set(asked))


class ApiTokens:
    """The API tokens in the database. Sync (SQLAlchemy): callers on the event loop run it in a
    worker thread. `from_env` is LOOKOUT_CONSOLE_USERS as app/console/accounts.py reads it."""

    def __init__(self, engine: sqlalchemy.Engine, from_env: Mapping[str, tuple[str, str]] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.from_env = dict(env_users() if from_env is None else from_env)
        self.clock = clock

    def user(self, name: str) -> tuple[int | None, str] | None:
        """A console user's (database id or None, role now), or None when there is no such user."""
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME_CHARS:
            return None
        with self.engine.connect() as connection:
            row = connection.execute(select(USERS.c.id, USERS.c.role).where(USERS.c.name == name)).first()
        if name in self.from_env:  # as sessions do: an entry of LOOKOUT_CONSOLE_USERS gives the role
            return (None if row is None else row.id), self.from_env[name][0]
        return None if row is None else (row.id, row.role)

    def add(self, user_name: str, scopes: Collection[str] | None = None, label: str = "",
            created_by: str = "cli") -> tuple[ApiTokenRow, str]:
        """A new token for the console user, and its secret (kept nowhere: show it now); `ValueError`
        with a sentence for an unknown user, a scope their role does not allow, or a bad label."""
        found = self.user(user_name)
        if found is None:
            raise ValueError(f"There is no console user {str(user_name)[:MAX_NAME_CHARS]!r}: "
                             "`python -m app.console.accounts add NAME --role viewer|maintainer` adds one.")
        user_id, role = found
        chosen, label = scopes_for(role, scopes), label_of(label)
        secret, now, created_by = new_secret(), self.clock(), created_by[:MAX_NAME_CHARS]
        with self.engine.begin() as connection:
            token_id = db.inserted_id(connection.execute(insert(API_TOKENS).values(
                user_name=user_name, user_id=user_id, scopes=" ".join(chosen), label=label, prefix=secret[:8],
                token_sha256=digest(secret), created_at=now, created_by=created_by,
            )))
        return ApiTokenRow(token_id, user_name, user_id, chosen, label=label, prefix=secret[:8], created_at=now,
                           created_by=created_by, last_used_at=None, revoked_at=None), secret

    def list(self, user_name: str | None = None) -> builtins.list[ApiTokenRow]:
        """Every token (revoked ones and removed users' too), oldest first, or one user's."""
        query = select(*COLUMNS).order_by(API_TOKENS.c.id)
        if user_name is not None:
            query = query.where(API_TOKENS.c.user_name == user_name)
        with self.engine.connect() as connection:
            return [_row(row) for row in connection.execute(query)]

    def revoke(self, token_id: int, by_user: str | None = None) -> bool:
        """Revoke a token from now on (a token revoked before keeps its first date), only one of
        `by_user`'s when given; False when there is no such token (of theirs)."""
        mine = [] if by_user is None else [API_TOKENS.c.user_name == by_user]
        with self.engine.begin() as connection:
            connection.execute(update(API_TOKENS).where(API_TOKENS.c.id == token_id, API_TOKENS.c.revoked_at.is_(None),
                                                        *mine).values(revoked_at=self.clock()))
            return connection.execute(select(API_TOKENS.c.id).where(API_TOKENS.c.id == token_id, *mine)).first() is not None

    def lookup(self, secret: str) -> ApiTokenRow | None:
        """The token whose secret this is, live or not (one indexed lookup of its hash)."""
        with self.engine.connect() as connection:
            row = connection.execute(select(*COLUMNS).where(API_TOKENS.c.token_sha256 == digest(secret))).first()
        return None if row is None else _row(row)

    def role_of(self, token: ApiTokenRow) -> str | None:
        """The role of the token's user now, or None once that user is gone (a database user removed,
        even if added again since: the new row's id is never the old one's; a LOOKOUT_CONSOLE_USERS
        entry taken out). Revocation is checked apart (`caller`, app/webapi/auth.py)."""
        found = self.user(token.user_name)
        if found is None or found[0] != token.user_id:
            return None
        return found[1]

    def use(self, token: ApiTokenRow, role: str) -> ApiCaller:
        """The caller a live token makes, its use recorded (at most once a minute)."""
        db.mark_used(self.engine, API_TOKENS, token.id, token.last_used_at, self.clock(), TOUCH_EVERY_S)
        return ApiCaller(token.user_id, token.user_name, role, frozenset(token.scopes) & allowed_scopes(role), token.id)

    def caller(self, secret: str) -> ApiCaller | None:
        """Who a secret acts as, or None when it is no live token of a console user."""
        token = self.lookup(secret)
        role = None if token is None or token.revoked_at is not None else self.role_of(token)
        return None if token is None or role is None else self.use(token, role)

