"""Stand-in for part A's module (branch i26-tokens), replaced when it is merged: API tokens of console
users, here kept in memory only."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import select

from app.models import ConsoleUser, table_of
from app.webapi.scopes import allowed_scopes

USERS = table_of(ConsoleUser)


@dataclass(frozen=True)
class ApiTokenRow:
    id: int
    user_name: str
    scopes: tuple[str, ...]
    label: str


_KEPT: dict[str, ApiTokenRow] = {}


class ApiTokens:
    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def add(self, user_name: str, scopes: list[str] | None = None, label: str = "") -> tuple[ApiTokenRow, str]:
        secret = secrets.token_hex(32)
        row = ApiTokenRow(len(_KEPT) + 1, user_name, tuple(scopes) if scopes is not None else (), label)
        _KEPT[secret] = row
        return row, secret

    def revoke(self, token_id: int, by_user: str | None = None) -> None:
        for secret, row in list(_KEPT.items()):
            if row.id == token_id:
                del _KEPT[secret]

    def caller(self, secret: str) -> object | None:
        from app.webapi.auth import ApiCaller
        row = _KEPT.get(secret)
        if row is None:
            return None
        with self.engine.connect() as connection:
            found = connection.execute(select(USERS.c.id, USERS.c.role).where(USERS.c.name == row.user_name)).first()
        if found is None:
            return None
        allowed = allowed_scopes(found.role)
        scopes = allowed & frozenset(row.scopes) if row.scopes else allowed
        return ApiCaller(found.id, row.user_name, found.role, scopes, row.id)
