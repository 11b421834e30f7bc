"""The web API's table: API tokens of console users (the secret is kept only as its hash). Every
package's tables make Lookout's schema (app/models.py)."""

from __future__ import annotations

from sqlmodel import Field, SQLModel


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
