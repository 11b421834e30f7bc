"""The console's tables: its users (beside those of LOOKOUT_CONSOLE_USERS) and their sessions. Every
package's tables make Lookout's schema (app/models.py)."""

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
