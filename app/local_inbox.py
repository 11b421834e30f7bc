"""Lookout's side of the monitoring plugin's destination seam (docs/design/reflex-plugin.md §4): with
no SENTRY_DSN, what the tunnel and the server SDK commit stays in the outbox as "local" rows for the
embedded inbox (the feeder reads them), and those rows count against the outbox's cap until read.

The rest of the seam is elsewhere: the local DSN is `Settings.reporting_dsn` (app/settings.py, read
from the database at start), the projects' quotas are the tunnel's `admit` and waking the feeder is
its `on_commit` (both wired in app/wiring.py).
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy import exists, func, select

from app.models import InboxRead, table_of
from reflex_lookout.outbox import LOCAL, OutboxStore
from reflex_lookout.tables import OUTBOX

READ = table_of(InboxRead)
# Local rows the inbox has not read yet: they wait, as pending rows do. Rows it read or rejected are
# its own, under its own budget (app/inbox/budget.py).
UNREAD_BYTES = select(func.coalesce(func.sum(OUTBOX.c.size), 0)).where(
    OUTBOX.c.status == LOCAL, ~exists().where(READ.c.outbox_id == OUTBOX.c.id))


def outbox_store(engine: sqlalchemy.Engine) -> OutboxStore:
    """Lookout's outbox: the plugin's, in Lookout's database, counting unread local rows as waiting."""
    return OutboxStore(engine, also_waiting=UNREAD_BYTES)
