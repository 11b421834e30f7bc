"""Lookout as the monitoring plugin's destination (`Monitoring(destination="app.local_inbox:destination")`
in rxconfig.py): its pages report with SENTRY_DSN when it is set, else with the embedded inbox's own
DSN, whose key is random per install and kept in the database.

The pages are built where the backend runs, on its database: the DSN is read there at compile time
(the database migrated first, since the backend may not have started on it yet)."""

from __future__ import annotations

from app.settings import SETTINGS
from reflex_lookout.settings import Dsn


class LocalInbox:
    def dsn(self) -> Dsn | None:
        if SETTINGS.dsn is None and SETTINGS.local_dsn is None:
            from app import db  # here, not at the top: rxconfig.py imports this module's package
            from app.inbox.projects import settle_local_dsn

            settle_local_dsn(SETTINGS, db.migrated_engine())
        return SETTINGS.reporting_dsn


destination = LocalInbox()
