"""Lookout as the monitoring plugin's destination (docs/design/reflex-plugin.md §4).

- Its pages (`Monitoring(destination="app.local_inbox:destination")` in rxconfig.py) report with
  SENTRY_DSN when it is set, else with the embedded inbox's own DSN, whose key is random per install
  and kept in the database. The pages are built where the backend runs, on its database: the DSN is
  read there at compile time (the database migrated first, since the backend may not have started on
  it yet).
- Its backend runs the plugin's runtime (app/wiring.py): with no SENTRY_DSN, what the tunnel and the
  server SDK commit stays in the outbox as "local" rows for the embedded inbox (the feeder reads
  them), and those rows count against the outbox's cap until read (`outbox_store`). The local DSN is
  `Settings.reporting_dsn`, the projects' quotas the tunnel's `admit`, waking the feeder its `on_commit`.
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy import exists, func, select

from app.inbox.models import InboxRead
from app.settings import SETTINGS, Settings
from app.tables import table_of
from reflex_lookout.dsn import Dsn
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


class LocalInbox:
    """The DSN the pages are built with: `settings`' SENTRY_DSN, else the local DSN read from `engine`
    (by default the configured database, migrated first)."""

    def __init__(self, settings: Settings = SETTINGS, engine: sqlalchemy.Engine | None = None) -> None:
        self.settings, self.engine = settings, engine

    def dsn(self) -> Dsn | None:
        settings = self.settings
        if settings.dsn is None and settings.local_dsn is None:
            from app import db  # here, not at the top: rxconfig.py imports this module's package
            from app.projects.registry import settle_local_dsn

            settle_local_dsn(settings, self.engine if self.engine is not None else db.migrated_engine())
        return settings.reporting_dsn


destination = LocalInbox()
