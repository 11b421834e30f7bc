"""Lookout's schema: every package's table models (imported here so that SQLModel's metadata holds them
all), and `METADATAS`, which Alembic's autogenerate, the schema test and the database copy compare and
copy: these and the monitoring plugin's tables (`outbox`, `worker_lease`: reflex_lookout/tables.py)."""

from __future__ import annotations

from sqlmodel import SQLModel

import app.alerts.models
import app.console.models
import app.inbox.models
import app.monitors.models
import app.projects.models
import app.releases.models
import app.sourcemaps.models  # noqa: F401  (each module's tables join the metadata when imported)
from reflex_lookout import tables as monitoring_tables

metadata = SQLModel.metadata
METADATAS = (metadata, monitoring_tables.metadata)

