"""Local mode: what the tunnel and the ingest endpoints may write of an envelope, decided before the
first write. The envelope's project (from the DSN it was accepted for) gives the inbound filters
(app/ingest/inbound_filters.py: they read an event as sent, and what they drop keeps only its type
and the filter's name) and the scrubbing options (reflex_lookout/scrubbing/envelope.py: every other
item filtered of PII, or reduced to its type). The tunnel runs it as its `prepare` (app/wiring.py)
before the commit, on its event loop while it is cheap (nothing for Relay) and else on a worker
thread, so the bytes as received are never written to any file; the feeder reads the result without
scrubbing it again (app/ingest/envelope_reader.py)."""

from __future__ import annotations

from typing import Any

from app.ingest.inbound_filters import FILTERED_TYPES, dropped_by
from app.ingest.incoming import UnknownProject
from app.ingest.store import InboxStore
from app.projects.filter_options import FilterOptions
from reflex_lookout.protocol.envelope import Envelope
from reflex_lookout.scrubbing.envelope import scrub_envelope
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from reflex_lookout.settings_error import SettingsError

MAX_KNOWN_DSNS = 1024  # DSNs whose project is kept (a DSN per project and key)


class BeforeWrite:
    def __init__(self, inbox: InboxStore) -> None:
        self.inbox = inbox
        # DSN → its project, once found (projects are never deleted): `project_for` parses the DSN
        # again on every call, a tenth of a cheap envelope's prepare.
        self._projects: dict[str, int] = {}

    def __call__(self, dsn: str, parsed: Envelope) -> Envelope:
        """`parsed`, accepted for `dsn`, filtered and scrubbed under its project's options (a DSN
        no project has yet, as the local one's before the backend made it: Sentry's defaults, and
        the feeder rejects the row later as before)."""
        filters, scrubbing = self.options_of(dsn)

        def drop(item_type: str, payload: dict[str, Any]) -> str | None:
            return dropped_by(item_type, payload, filters)

        return scrub_envelope(parsed, scrubbing, drop, FILTERED_TYPES)

    def options_of(self, dsn: str) -> tuple[FilterOptions, ScrubbingSettings]:
        project_id = self._projects.get(dsn)
        if project_id is None:
            try:
                project_id = self.inbox.project_for(dsn)
            except (UnknownProject, SettingsError):
                return FilterOptions(), ScrubbingSettings()
            if len(self._projects) < MAX_KNOWN_DSNS:
                self._projects[dsn] = project_id
        return self.inbox.options.filters_of(project_id), self.inbox.scrubbing_of(project_id)
