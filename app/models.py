"""Every sqlmodel table of Lookout's own. Alembic's autogenerate compares the migrations against
`METADATAS`: these and the monitoring plugin's tables (`outbox`, `worker_lease`: reflex_lookout/tables.py)."""

from __future__ import annotations

from sqlalchemy import Column, Index, LargeBinary, Table
from sqlmodel import Field, SQLModel

from reflex_lookout import tables as monitoring_tables

metadata = SQLModel.metadata
METADATAS = (metadata, monitoring_tables.metadata)


def table_of(model: type[SQLModel]) -> Table:
    """The table a table model maps, for SQLAlchemy Core statements."""
    return model.__table__  # type: ignore[attr-defined]  # SQLAlchemy sets it on each table model; SQLModel does not declare it


class InboxProject(SQLModel, table=True):
    """A project of the embedded inbox: SDKs report to it with a DSN naming its public key and id."""

    __tablename__ = "inbox_project"

    id: int | None = Field(default=None, primary_key=True)
    name: str
    public_key: str = Field(unique=True)
    created_at: float


class InboxIssue(SQLModel, table=True):
    """Events with one fingerprint (app/ingest/grouping.py) in one project."""

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
    """One tag value of an issue's events, counted at ingest (app/ingest/tag_index.py): what search
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


class InboxFeedback(SQLModel, table=True):
    """What a user wrote: a `feedback` item (user feedback widget) or a legacy `user_report`."""

    __tablename__ = "inbox_feedback"
    __table_args__ = (Index("ix_inbox_feedback_event", "project_id", "event_id"),)

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    received_at: float
    event_id: str = ""  # the error event it is about, when it names one
    name: str = ""
    email: str = ""
    message: str = ""


class InboxCount(SQLModel, table=True):
    """Counted, not kept: session updates by release, environment and status, and what SDKs
    reported discarding (client reports) by category and reason."""

    __tablename__ = "inbox_count"
    __table_args__ = (Index("ux_inbox_count", "project_id", "kind", "key", unique=True),)

    id: int | None = Field(default=None, primary_key=True)
    project_id: int = Field(foreign_key="inbox_project.id")
    kind: str  # "session", "discarded" or "filtered" (what an inbound filter dropped)
    key: str  # "release|environment|status", "category|reason" or the filter's name
    count: int = 0


class InboxProjectSettings(SQLModel, table=True):
    """A project's inbound filters, PII scrubbing options, quotas and source-map settings
    (app/projects/settings_store.py), each a bounded JSON object of its dataclass's fields; a project
    without a row has the defaults. What each filter dropped is counted in `inbox_count` (kind "filtered")."""

    __tablename__ = "inbox_project_settings"

    project_id: int = Field(primary_key=True, foreign_key="inbox_project.id", sa_column_kwargs={"autoincrement": False})
    filters: str = "{}"  # app/projects/filter_settings.py's FilterSettings
    scrubbing: str = "{}"  # app/ingest/scrubbing_settings.py's ScrubbingSettings
    quotas: str = "{}"  # app/projects/quota_settings.py's QuotaSettings
    sourcemaps: str = "{}"  # app/projects/sourcemap_settings.py's SourceMapSettings
    updated_at: float = 0.0
    updated_by: str = ""


class InboxQuotaCount(SQLModel, table=True):
    """How many error events a project sent in one window of its quotas (app/ingest/quotas.py), as
    every worker added them: the window's length (`seconds`) and its slot (epoch seconds // length)."""

    __tablename__ = "inbox_quota_count"

    project_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    seconds: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    slot: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    count: int = 0


class SourceMapBuild(SQLModel, table=True):
    """A production build of the app's front end whose source maps are kept (app/sourcemaps/library.py)."""

    __tablename__ = "sourcemap_build"

    __table_args__ = (Index("ix_sourcemap_build_project", "project_id"),)

    id: int | None = Field(default=None, primary_key=True)
    # The app's own builds: a hash of the served JavaScript (reflex_lookout/sourcemaps/build_step.py). Uploaded
    # artifact bundles: "upload-<project id>-<the bundle's SHA-1>" (app/sourcemaps/uploads.py).
    build_id: str = Field(unique=True)
    created_at: float  # when it was built (uploaded); the newest LOOKOUT_SOURCEMAP_BUILDS own builds are kept
    pages: str = "{}"  # JSON: generated route or component module → its Python page (reflex_lookout/sourcemaps/pages.py)
    project_id: int | None = None  # None: one of the app's own builds; else the project an upload is for
    bytes: int = 0  # of its files' sources and maps (an upload's count against its project's cap)
    token_id: int | None = None  # the upload token that sent it


class SourceMapFile(SQLModel, table=True):
    """One JavaScript chunk of a build as it was served, with its source map."""

    __tablename__ = "sourcemap_file"
    __table_args__ = (
        Index("ix_sourcemap_file_debug_id", "debug_id"),
        Index("ix_sourcemap_file_asset_path", "asset_path"),
        Index("ix_sourcemap_file_build", "build"),
    )

    id: int | None = Field(default=None, primary_key=True)
    build: int = Field(foreign_key="sourcemap_build.id")
    debug_id: str  # lower-case UUID; one chunk's ID may recur in builds that left it unchanged
    asset_path: str  # URL path: "/assets/_index-CQSUJ9PM.js"
    sha256: str  # of `source`
    source: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # the served, injected JavaScript
    sourcemap: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


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


class UploadToken(SQLModel, table=True):
    """A project's source-map upload token (app/sourcemaps/tokens.py). Only its SHA-256 is kept: the
    secret is shown once, when it is made."""

    __tablename__ = "upload_token"

    id: int | None = Field(default=None, primary_key=True)
    project_id: int
    label: str = ""
    prefix: str  # the secret's first 8 characters, to tell tokens apart on the console
    token_sha256: str = Field(unique=True)
    created_at: float
    created_by: str = ""  # the console user, or "cli"
    last_used_at: float | None = None
    revoked_at: float | None = None


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


class UploadChunk(SQLModel, table=True):
    """A chunk of an artifact bundle sentry-cli uploaded, kept until the bundle is assembled
    (app/sourcemaps/chunks.py); per project, so one token learns nothing of another's uploads."""

    __tablename__ = "upload_chunk"

    project_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    sha1: str = Field(primary_key=True)  # of the uncompressed chunk, lower-case hex
    size: int
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    created_at: float
