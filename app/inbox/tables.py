"""The inbox's tables (app/inbox/models.py), by the names the inbox's modules use."""

from __future__ import annotations

from app.inbox.models import (
    InboxBackfill,
    InboxComment,
    InboxCount,
    InboxEvent,
    InboxFeedback,
    InboxGroupHash,
    InboxIssue,
    InboxIssueTag,
    InboxLog,
    InboxQuotaCount,
    InboxRead,
    InboxSavedSearch,
    InboxTagQueue,
    InboxTransaction,
)
from app.tables import (
    chunks as chunks,  # (re-exported: the inbox's modules take it from here)
    table_of,
)

ISSUES = table_of(InboxIssue)
EVENTS = table_of(InboxEvent)
GROUPHASHES = table_of(InboxGroupHash)
ISSUE_TAGS = table_of(InboxIssueTag)
TAG_QUEUE = table_of(InboxTagQueue)
COMMENTS = table_of(InboxComment)
SAVED_SEARCHES = table_of(InboxSavedSearch)
BACKFILLS = table_of(InboxBackfill)
READ = table_of(InboxRead)
TRANSACTIONS = table_of(InboxTransaction)
LOGS = table_of(InboxLog)
FEEDBACK = table_of(InboxFeedback)
COUNTS = table_of(InboxCount)
QUOTA_COUNTS = table_of(InboxQuotaCount)
# An issue's row as the console, the web API and search read it.
ISSUE_COLUMNS = (
    ISSUES.c.id, ISSUES.c.project_id, ISSUES.c.title, ISSUES.c.culprit, ISSUES.c.level, ISSUES.c.kind,
    ISSUES.c.status, ISSUES.c.resolved_in_release, ISSUES.c.first_seen, ISSUES.c.last_seen, ISSUES.c.event_count,
    ISSUES.c.last_event_id,
)
# The largest envelope an outbox row holds, decompressed (LOOKOUT_MAX_ENVELOPE_BYTES's default).
MAX_ENVELOPE_BYTES = 100 * 1024 * 1024
