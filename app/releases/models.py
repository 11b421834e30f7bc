"""The sessions table: what sentry-sdk and the browser SDK report of each session (`session` items,
one row per session id, its worst status winning) and of many at once (`sessions` aggregates, one
row per release, environment, minute started and user), summed by app/releases/health.py.
Every package's tables make Lookout's schema (app/models.py)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class InboxSession(SQLModel, table=True):
    """Sessions of one release and environment: a single session (`key` "s:" and its sid), an
    aggregate's group ("a:" and its start and user), or older ones folded into their hour ("h:").
    The four counts are exclusive: `sessions` of them started (a single one: its `init` update was
    seen), of which `errored` ended errored (not crashed or abnormal), `abnormal` and `crashed`; the
    rest are healthy."""

    __tablename__ = "inbox_session"
    __table_args__ = (
        Index("ux_inbox_session_key", "project_id", "release", "environment", "key", unique=True),
        Index("ix_inbox_session_project_started", "project_id", "started"),
        Index("ix_inbox_session_release_started", "project_id", "release", "started"),
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    release: str
    environment: str = ""
    key: str  # "s:<sid>", "a:<minute started>:<did hash>", or "h:<hour>" (folded: session_retention.py)
    did: str = ""  # the user's distinct id, hashed (app/releases/session_writer.py); "": none
    started: float  # epoch seconds
    updated_at: float = 0.0  # when the last update of it was received
    sessions: int = 0
    errored: int = 0
    abnormal: int = 0
    crashed: int = 0
