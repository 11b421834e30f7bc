"""The projects' tables: a project (its id, name and public key) and its settings' row. Every package's
tables make Lookout's schema (app/models.py)."""

from __future__ import annotations

from sqlmodel import Field, SQLModel


class InboxProject(SQLModel, table=True):
    """A project of the embedded inbox: SDKs report to it with a DSN naming its public key and id."""

    __tablename__ = "inbox_project"

    id: int | None = Field(default=None, primary_key=True)
    name: str
    public_key: str = Field(unique=True)
    created_at: float


class InboxProjectSettings(SQLModel, table=True):
    """A project's inbound filters, PII scrubbing options, quotas and source-map settings
    (app/projects/settings_store.py), each a bounded JSON object of its dataclass's fields; a project
    without a row has the defaults. What each filter dropped is counted in `inbox_count` (kind "filtered")."""

    __tablename__ = "inbox_project_settings"

    project_id: int = Field(primary_key=True, foreign_key="inbox_project.id", sa_column_kwargs={"autoincrement": False})
    filters: str = "{}"  # app/projects/filter_settings.py's FilterSettings
    scrubbing: str = "{}"  # app/ingest/scrubbing_settings.py's ScrubbingSettings
    quotas: str = "{}"  # app/projects/quota_settings.py's QuotaSettings
    sourcemaps: str = "{}"  # app/projects/sourcemap_settings.py's SourceMapSettings
    updated_at: float = 0.0
    updated_by: str = ""
