"""Every sqlmodel table. Alembic's autogenerate compares the migrations against this metadata."""

from __future__ import annotations

from sqlalchemy import Column, Index, LargeBinary
from sqlmodel import Field, SQLModel

metadata = SQLModel.metadata


class OutboxEnvelope(SQLModel, table=True):
    """An envelope the tunnel accepted, kept until upstream took it (or refused it for good).

    `body` holds the bytes exactly as received, in their original `content_encoding`, so what
    reaches Sentry is byte-identical. Status "pending" rows are forwarded, oldest first per DSN;
    "local" rows (no SENTRY_DSN) wait for the embedded inbox.
    """

    __tablename__ = "outbox"
    __table_args__ = (
        Index("ix_outbox_status_dsn_id", "status", "dsn", "id"),
        # Covers the depth and size sums: without it they read every row's page, blob included.
        Index("ix_outbox_status_size", "status", "size"),
    )

    id: int | None = Field(default=None, primary_key=True)
    dsn: str
    status: str = "pending"
    received_at: float
    content_encoding: str = ""
    categories: str = ""  # data categories of the items, comma-separated (rate limits)
    event_id: str | None = None
    size: int  # len(body)
    body: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    attempts: int = 0
    next_attempt_at: float = 0.0
    last_error: str = ""
