"""The console's tables: its users (beside those of LOOKOUT_CONSOLE_USERS), their sessions and their
API tokens (the web API's: app/webapi/tokens.py). Every package's tables make Lookout's schema
(app/models.py)."""

from __future__ import annotations

from sqlmodel import Field, SQLModel


class ConsoleUser(SQLModel, table=True):
    """Someone who may sign in to the console from another machine (added with the CLI). An id is
    never handed out again, not even the newest one after its user is removed: AUTOINCREMENT on
    SQLite (alembic 0022), a sequence on PostgreSQL. API tokens name the row they were made for."""

    __tablename__ = "console_user"
    __table_args__ = {"sqlite_autoincrement": True}

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(unique=True)
    role: str  # viewer or maintainer
    password_hash: str  # scrypt, see app/console/accounts.py
    created_at: float


class ConsoleSession(SQLModel, table=True):
    """A signed-in browser: the SHA-256 of its cookie's token, never the token itself."""

    __tablename__ = "console_session"

    id: int | None = Field(default=None, primary_key=True)
    token_hash: str = Field(unique=True)
    name: str
    role: str
    expires_at: float


class ApiToken(SQLModel, table=True):
    """A console user's token for Sentry's web API (app/webapi/tokens.py), with Sentry's scopes. Only
    its SHA-256 is kept: the secret is shown once, when it is made."""

    __tablename__ = "api_token"

    id: int | None = Field(default=None, primary_key=True)
    user_name: str = Field(index=True)  # the console user it acts as
    user_id: int | None = None  # that user's console_user id; None for a user of LOOKOUT_CONSOLE_USERS
    scopes: str  # space-separated, in app/webapi/scopes.py's order
    label: str = ""
    prefix: str  # the secret's first 8 characters, to tell tokens apart on the console
    token_sha256: str = Field(unique=True)
    created_at: float
    created_by: str = ""  # the console user who made it, or "cli"
    last_used_at: float | None = None
    revoked_at: float | None = None
