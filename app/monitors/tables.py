"""The monitors' tables by the names the monitor modules use (as app/inbox/tables.py names the inbox's)."""

from __future__ import annotations

from app.monitors.models import InboxCheckin, InboxMonitor
from app.tables import table_of

MONITORS = table_of(InboxMonitor)
CHECKINS = table_of(InboxCheckin)
