"""The projects' tables (app/models.py), by the names the modules use: a project's row (its id, name
and public key) and its options' row."""

from __future__ import annotations

from app.projects.models import InboxProject, InboxProjectOptions
from app.tables import table_of

PROJECTS = table_of(InboxProject)
PROJECT_OPTIONS = table_of(InboxProjectOptions)
