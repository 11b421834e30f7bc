"""The inbox's tables: issues and how events find them (grouping hashes), their tags, comments, saved
searches and changes; the events, transactions, log lines and feedback stored; counts. Every
package's tables make Lookout's schema (app/models.py)."""

from __future__ import annotations

from sqlalchemy import Index
from sqlmodel import Field, SQLModel

import app.projects.models  # noqa: F401  (inbox_project, which these tables refer to)


class InboxIssue(SQLModel, table=True):
    """Events with one fingerprint (app/inbox/grouping.py) in one project."""

    __tablename__ = "inbox_issue"
    __table_args__ = (
        Index("ux_inbox_issue_project_fingerprint", "project_id", "fingerprint", unique=True),
        Index("ix_inbox_issue_project_last_seen", "project_id", "last_seen"),
        Index("ix_inbox_issue_last_seen", "last_seen"),  # the list's default order, every project
        Index("ix_inbox_issue_first_seen", "first_seen"),
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    fingerprint: str  # sha256 hex of the grouping parts
    title: str
    culprit: str = ""
    level: str = "error"
    kind: str = "error"  # error, message or default
    status: str = "unresolved"  # unresolved, resolved, ignored or regressed (app/inbox/states.py)
    # "Resolved in the next release": the release current when it was resolved; only an event of
    # another release regresses it. Empty: any new event does.
    resolved_in_release: str = ""
    first_seen: float
    last_seen: float
    event_count: int = 0
    last_event_id: str = ""
    assignee: str = ""  # the console user it is assigned to ("": nobody)
    # "Ignore for a time / until N more events" (app/inbox/states.py): a new event after this time,
    # or once `event_count` reaches this, makes it unresolved again. None: ignored for good.
    ignored_until: float | None = None
    ignored_until_count: int | None = None


class InboxGroupHash(SQLModel, table=True):
    """A grouping hash (fingerprint) of a project and the issue its events go to: the issue it made,
    or the one that issue was merged into (app/inbox/merge.py)."""

    __tablename__ = "inbox_grouphash"
    __table_args__ = (
        Index("ux_inbox_grouphash_project_fingerprint", "project_id", "fingerprint", unique=True),
        Index("ix_inbox_grouphash_issue", "issue_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    fingerprint: str
    issue_id: int = Field(foreign_key="inbox_issue.id")


class InboxIssueTag(SQLModel, table=True):
    """One tag value of an issue's events, counted at ingest (app/inbox/tag_index.py): what search
    (`key:value`) and the issue page's distributions read."""

    __tablename__ = "inbox_issue_tag"
    __table_args__ = (
        Index("ux_inbox_issue_tag", "issue_id", "key", "value", unique=True),
        Index("ix_inbox_issue_tag_key_value", "key", "value", "issue_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    issue_id: int = Field(foreign_key="inbox_issue.id")
    key: str  # at most 32 characters, as Sentry bounds them
    value: str  # at most 200 characters
    count: int = 0
    first_seen: float
    last_seen: float


class InboxTagQueue(SQLModel, table=True):
    """Tag counts an ingest transaction stored and the tag counter has still to add into the index
    (app/ingest/tag_counter.py): one row per issue per ingest batch, its (key, value, count, first
    seen, last seen) as a JSON list. A row is deleted in the transaction that adds it."""

    __tablename__ = "inbox_tag_queue"
    __table_args__ = (Index("ix_inbox_tag_queue_issue", "issue_id"),)

    id: int | None = Field(default=None, primary_key=True)
    issue_id: int  # no foreign key: the row goes with its issue (merge, deletion) in the same transaction
    counts: str


class InboxBackfill(SQLModel, table=True):
    """A bounded background pass over rows stored before a migration (app/ingest/tag_backfill.py):
    the rows with ids from `next_id` to `until_id` are still to be done."""

    __tablename__ = "inbox_backfill"

    name: str = Field(primary_key=True)  # "tags": the tag index of events stored before migration 0015
    next_id: int
    until_id: int


class InboxComment(SQLModel, table=True):
    """What a console user wrote on an issue (app/inbox/activity.py)."""

    __tablename__ = "inbox_comment"
    __table_args__ = (Index("ix_inbox_comment_issue", "issue_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    issue_id: int = Field(foreign_key="inbox_issue.id")
    author: str
    body: str
    created_at: float
    edited_at: float | None = None


class InboxSavedSearch(SQLModel, table=True):
    """A search a user saved for themselves, or one a maintainer pinned for everyone (owner "")."""

    __tablename__ = "inbox_saved_search"
    __table_args__ = (Index("ix_inbox_saved_search_owner", "owner", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    owner: str  # the console user's name; "" for a search pinned for everyone
    name: str
    query: str
    sort: str = "last_seen"
    created_at: float


class InboxEvent(SQLModel, table=True):
    """One error or message event, kept as the SDK sent it: in the outbox row of its envelope
    (`envelope_id`, item `item_index`), or, for an event that came without one, in `payload` (JSON)."""

    __tablename__ = "inbox_event"
    __table_args__ = (
        Index("ux_inbox_event_project_event_id", "project_id", "event_id", unique=True),
        Index("ix_inbox_event_issue_received", "issue_id", "received_at"),
        Index("ix_inbox_event_envelope", "envelope_id"),
        Index("ix_inbox_event_trace", "trace_id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    issue_id: int = Field(foreign_key="inbox_issue.id")
    event_id: str  # 32 hex digits
    received_at: float
    timestamp: float | None = None
    level: str = "error"
    platform: str = ""
    environment: str = ""
    release: str = ""
    title: str = ""
    payload: str  # the event's JSON, or "" when it is in its envelope's outbox row
    envelope_id: int | None = None  # the outbox row (not a foreign key: retention keeps the row while referenced)
    item_index: int | None = None  # the event's item in that envelope
    fingerprint: str = ""  # the grouping hash it was grouped by (unmerge moves a hash's events)
    trace_id: str = ""  # the trace it happened in (contexts.trace.trace_id), "" when none or stored before 0016


class InboxRead(SQLModel, table=True):
    """An outbox row the inbox feeder has read (kept apart: marking the row itself would rewrite
    its whole body in SQLite). The row stays, as the stored copy of its events and raw items."""

    __tablename__ = "inbox_read"

    outbox_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    read_at: float


class InboxIssueChange(SQLModel, table=True):
    """One entry of an issue's history: a change of its status, its assignment, a merge, an unmerge
    or a comment; when, by whom (a user, or "system" for a regression)."""

    __tablename__ = "inbox_issue_change"
    __table_args__ = (Index("ix_inbox_issue_change_issue", "issue_id", "id"),)

    id: int | None = Field(default=None, primary_key=True)
    issue_id: int = Field(foreign_key="inbox_issue.id")
    at: float
    actor: str
    from_status: str
    to_status: str
    note: str = ""
    kind: str = "status"  # status, assigned, merged, unmerged or comment (app/inbox/activity.py)


class InboxTransaction(SQLModel, table=True):
    """One transaction (a trace's root or service segment) with its spans, as the SDK sent it."""

    __tablename__ = "inbox_transaction"
    __table_args__ = (
        Index("ux_inbox_transaction_project_event_id", "project_id", "event_id", unique=True),
        Index("ix_inbox_transaction_trace", "trace_id"),
        Index("ix_inbox_transaction_received", "received_at"),
        # The /traces filters (0017): each newest first, and counted, from its own index.
        Index("ix_inbox_transaction_project", "project_id", "id"),
        Index("ix_inbox_transaction_environment", "environment", "id"),
        Index("ix_inbox_transaction_release", "release", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    event_id: str
    trace_id: str = ""
    span_id: str = ""
    parent_span_id: str = ""
    name: str = ""
    op: str = ""
    status: str = ""
    platform: str = ""
    start: float = 0.0
    duration_ms: float = 0.0
    span_count: int = 0
    received_at: float
    payload: str  # the transaction's JSON
    environment: str = ""  # as sent; "" when none, or stored before 0017
    release: str = ""


class InboxLog(SQLModel, table=True):
    """One log line (an item of a `log` envelope item)."""

    __tablename__ = "inbox_log"
    __table_args__ = (
        Index("ix_inbox_log_project_id", "project_id", "id"),
        Index("ix_inbox_log_trace", "trace_id"),
        # The /logs filters (0017): each newest first from its own index.
        Index("ix_inbox_log_environment", "environment", "id"),
        Index("ix_inbox_log_release", "release", "id"),
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    timestamp: float
    level: str = "info"
    body: str = ""
    trace_id: str = ""
    attributes: str = "{}"  # JSON: name → value
    # Its `sentry.environment` and `sentry.release` attributes; "" when none, or stored before 0017.
    environment: str = ""
    release: str = ""


class InboxFeedback(SQLModel, table=True):
    """What a user wrote: a `feedback` item (user feedback widget) or a legacy `user_report`."""

    __tablename__ = "inbox_feedback"
    __table_args__ = (
        Index("ix_inbox_feedback_event", "project_id", "event_id"),
        Index("ix_inbox_feedback_project_id", "project_id", "id"),  # /feedback's list of one project (0025)
    )

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    received_at: float
    event_id: str = ""  # the error event it is about, when it names one
    name: str = ""
    email: str = ""
    message: str = ""
    # The page it was sent from and the release the item names (0025); "" when none, or stored before.
    url: str = ""
    release: str = ""


class InboxCount(SQLModel, table=True):
    """Counted, not kept: what SDKs reported discarding (client reports) by category and reason, and
    what inbound filters dropped. (Before migration 0027, session updates too: release health counts
    sessions now, app/releases/.)"""

    __tablename__ = "inbox_count"
    __table_args__ = (Index("ux_inbox_count", "project_id", "kind", "key", unique=True),)

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    kind: str  # "session", "discarded" or "filtered" (what an inbound filter dropped)
    key: str  # "release|environment|status", "category|reason" or the filter's name
    count: int = 0


class InboxQuotaCount(SQLModel, table=True):
    """How many error events a project sent in one window of its quotas (app/ingest/quotas.py), as
    every worker added them: the window's length (`seconds`) and its slot (epoch seconds // length)."""

    __tablename__ = "inbox_quota_count"

    project_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    seconds: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    slot: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    count: int = 0
