"""The releases' tables by the names the release modules use (as app/inbox/tables.py names the inbox's)."""

from __future__ import annotations

from app.releases.models import InboxSession
from app.tables import table_of

SESSIONS = table_of(InboxSession)
