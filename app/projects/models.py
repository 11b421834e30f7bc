"""The projects' tables: a project (its id, name and public key) and its options' row. Every package's
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


class InboxProjectOptions(SQLModel, table=True):
    """A project's inbound filters, PII scrubbing options, quotas and source-map options
    (app/projects/options_store.py), each a bounded JSON object of its dataclass's fields; a project
    without a row has the defaults. What each filter dropped is counted in `inbox_count` (kind "filtered").
    The table keeps the name migration 0018 made it with."""

    __tablename__ = "inbox_project_settings"

    project_id: int = Field(primary_key=True, foreign_key="inbox_project.id", sa_column_kwargs={"autoincrement": False})
    filters: str = "{}"  # app/projects/filter_options.py's FilterOptions
    scrubbing: str = "{}"  # reflex_lookout/scrubbing/settings.py's ScrubbingSettings
    quotas: str = "{}"  # app/projects/quota_options.py's QuotaOptions
    sourcemaps: str = "{}"  # app/projects/sourcemap_options.py's SourceMapOptions
    updated_at: float = 0.0
    updated_by: str = ""
