"""The projects' tables (app/models.py), by the names the modules use: a project's row (its id, name
and public key) and its settings' row."""

from __future__ import annotations

from app.projects.models import InboxProject, InboxProjectSettings
from app.tables import table_of

PROJECTS = table_of(InboxProject)
PROJECT_SETTINGS = table_of(InboxProjectSettings)
