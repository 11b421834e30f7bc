"""The monitoring's tables, SQLAlchemy Core on a `MetaData` of their own (the host app's models,
SQLModel's or not, never see them): the outbox the tunnel writes and the forwarder reads, and the
leases that keep one worker at a time on a job.

A host app's outbox database gets them with `create(engine)` (checkfirst: a second worker or a
restart finds them there). Lookout keeps them in its own database under the same names as before
(`outbox`, `worker_lease`: no data moved); its Alembic migrations make them and its `alembic/env.py`
compares both metadatas.
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy import Column, Float, Index, Integer, LargeBinary, MetaData, String, Table

metadata = MetaData()

# An envelope the tunnel accepted, kept until upstream took it (or refused it for good). `body` holds
# the bytes exactly as received, in their original `content_encoding`, so what reaches Sentry is
# byte-identical. Status "pending" rows are forwarded, oldest first per DSN; a destination may give
# rows another status (Lookout's "local": they wait for its embedded inbox).
OUTBOX = Table(
    "outbox", metadata,
    Column("id", Integer, primary_key=True),
    Column("dsn", String, nullable=False),
    Column("status", String, nullable=False),
    Column("received_at", Float, nullable=False),
    Column("content_encoding", String, nullable=False),
    Column("categories", String, nullable=False),  # data categories of the items, comma-separated (rate limits)
    Column("event_id", String, nullable=True),
    Column("size", Integer, nullable=False),  # len(body)
    Column("body", LargeBinary, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", Float, nullable=False),
    Column("last_error", String, nullable=False),
    Index("ix_outbox_status_dsn_id", "status", "dsn", "id"),
    # Covers the depth and size sums: without it they read every row's page, blob included.
    Index("ix_outbox_status_size", "status", "size"),
)

# Who may run a piece of work that must run once at a time (background.Lease).
WORKER_LEASE = Table(
    "worker_lease", metadata,
    Column("name", String, primary_key=True),
    Column("holder", String, nullable=False),
    Column("until", Float, nullable=False),  # epoch seconds; expired leases may be taken
)


def create(engine: sqlalchemy.Engine) -> None:
    """Make the tables that are missing (a host app's outbox database; Lookout migrates its own)."""
    metadata.create_all(engine, checkfirst=True)
