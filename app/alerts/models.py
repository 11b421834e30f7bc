"""The alerts' tables: each project's rules, the channels made in the console, the alerts and their
deliveries. Every package's tables make Lookout's schema (app/models.py)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field, SQLModel


class AlertRules(SQLModel, table=True):
    """A project's alert rules (app/alerts/rules.py); a project without a row has the defaults."""

    __tablename__ = "alert_rules"

    project_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    new_issue: bool = True
    regression: bool = True
    spike: bool = True
    spike_events: int = 100  # more than this many events of one issue ...
    spike_minutes: int = 10  # ... within this many minutes is a spike
    quiet_minutes: int = 30  # an issue alerts at most once per this, per rule


class AlertChannel(SQLModel, table=True):
    """Where alerts go: an e-mail address or a webhook (app/alerts/channels.py)."""

    __tablename__ = "alert_channel"

    id: int | None = Field(default=None, primary_key=True)
    project_id: int | None = None  # None: every project
    kind: str  # email, slack, discord or json
    target: str  # the e-mail address, or the webhook's URL (a secret itself: shown masked)
    secret: str = ""  # json: the HMAC-SHA256 key of X-Lookout-Signature
    origin: str = "console"  # console, or env (LOOKOUT_ALERT_EMAILS / _WEBHOOKS, rebuilt at each start)
    enabled: bool = True
    created_at: float
    last_delivery_at: float | None = None
    last_error: str = ""  # the last failure, at most 1 KB of it
    last_error_at: float | None = None


class Alert(SQLModel, table=True):
    """An alert that is due, committed with the ingest that made it due (app/alerts/triggers.py).
    What a message may say about the issue is copied here, so that it outlives the issue's eviction."""

    __tablename__ = "alert"
    __table_args__ = (
        Index("ix_alert_issue_rule_created", "issue_id", "rule", "created_at"),
        Index("ix_alert_fanned", "fanned_out", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    dedupe_key: str = Field(unique=True)  # 32 hex digits, carried by every message that lists it
    project_id: int
    issue_id: int  # not a foreign key: the issue may be evicted before the alert is sent
    rule: str  # new, regression, spike or test
    reason: str  # why it fired, a sentence
    created_at: float
    channel_id: int | None = None  # a test alert goes to this channel only
    fanned_out: bool = False  # a delivery row exists for each channel it goes to
    title: str = ""
    culprit: str = ""
    level: str = ""
    environment: str = ""
    release: str = ""
    first_seen: float = 0.0
    last_seen: float = 0.0
    event_count: int = 0


class AlertDelivery(SQLModel, table=True):
    """One alert still to be sent to one channel; deleted once sent (app/alerts/sender.py)."""

    __tablename__ = "alert_delivery"
    __table_args__ = (Index("ix_alert_delivery_channel_due", "channel_id", "next_attempt_at"),)

    id: int | None = Field(default=None, primary_key=True)
    alert_id: int
    channel_id: int
    attempts: int = 0
    next_attempt_at: float = 0.0
