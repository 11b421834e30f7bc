"""The cron monitors' tables: one row per monitored job (`inbox_monitor`, by project and slug) and
its recent check-ins (`inbox_checkin`, the newest CHECKINS_KEPT of each: app/monitors/checkins.py).
Every package's tables make Lookout's schema (app/models.py)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class InboxMonitor(SQLModel, table=True):
    """A job that checks in (sentry-sdk's `monitor_slug`), its schedule as its last `monitor_config`
    gave it, and its state: new, ok, missed, error or timeout."""

    __tablename__ = "inbox_monitor"
    __table_args__ = (
        Index("ux_inbox_monitor_project_slug", "project_id", "slug", unique=True),
        Index("ix_inbox_monitor_next_expected", "next_expected_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    slug: str
    name: str = ""
    schedule_type: str = ""  # crontab, interval, or "" (no schedule: never missed)
    schedule_value: str = ""  # the crontab ("*/5 * * * *"), or the interval's number
    schedule_unit: str = ""  # an interval's: minute, hour, day, week, month or year
    checkin_margin_min: int = 1
    max_runtime_min: int = 30
    timezone: str = "UTC"
    state: str = "new"  # new, ok, missed, error or timeout
    next_expected_at: float | None = None  # epoch seconds; None: no schedule
    last_checkin_at: float | None = None
    last_state_change_at: float | None = None
    created_at: float = 0.0


class InboxCheckin(SQLModel, table=True):
    """One check-in: the SDK's (in_progress, then ok or error under the same `check_in_id`), or the
    watcher's (missed; an in_progress that overran becomes timeout)."""

    __tablename__ = "inbox_checkin"
    __table_args__ = (
        Index("ix_inbox_checkin_monitor_id", "monitor_id", "id"),
        Index("ix_inbox_checkin_monitor_check_in", "monitor_id", "check_in_id"),
        Index("ix_inbox_checkin_status_started", "status", "started_at"),
    )

    id: int | None = Field(default=None, primary_key=True)
    monitor_id: int = Field(foreign_key="inbox_monitor.id")
    check_in_id: str = ""  # 32 hex digits as the SDK sent it; "" for a missed one
    status: str  # in_progress, ok, error, missed or timeout
    duration: float | None = None  # seconds, as the SDK measured
    received_at: float
    started_at: float  # when the job began (its in_progress), else when it was received; a missed one's deadline
    environment: str = ""
    release: str = ""
    trace_id: str = ""
