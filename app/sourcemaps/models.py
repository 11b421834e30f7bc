"""The source maps' tables: builds and their files (maps in the database), upload tokens, and the
chunks of an upload until it is assembled. Every package's tables make Lookout's schema
(app/models.py)."""

from __future__ import annotations

from sqlalchemy import Column, Index, LargeBinary
from sqlmodel import Field, SQLModel


class SourceMapBuild(SQLModel, table=True):
    """A production build of the app's front end whose source maps are kept (app/sourcemaps/library.py)."""

    __tablename__ = "sourcemap_build"

    __table_args__ = (Index("ix_sourcemap_build_project", "project_id"),)

    id: int | None = Field(default=None, primary_key=True)
    # The app's own builds: a hash of the served JavaScript (reflex_lookout/sourcemaps/build_step.py). Uploaded
    # artifact bundles: "upload-<project id>-<the bundle's SHA-1>" (app/sourcemaps/uploads.py).
    build_id: str = Field(unique=True)
    created_at: float  # when it was built (uploaded); the newest LOOKOUT_SOURCEMAP_BUILDS own builds are kept
    pages: str = "{}"  # JSON: generated route or component module → its Python page (reflex_lookout/sourcemaps/pages.py)
    project_id: int | None = None  # None: one of the app's own builds; else the project an upload is for
    bytes: int = 0  # of its files' sources and maps (an upload's count against its project's cap)
    token_id: int | None = None  # the upload token that sent it


class SourceMapFile(SQLModel, table=True):
    """One JavaScript chunk of a build as it was served, with its source map."""

    __tablename__ = "sourcemap_file"
    __table_args__ = (
        Index("ix_sourcemap_file_debug_id", "debug_id"),
        Index("ix_sourcemap_file_asset_path", "asset_path"),
        Index("ix_sourcemap_file_build", "build"),
    )

    id: int | None = Field(default=None, primary_key=True)
    build: int = Field(foreign_key="sourcemap_build.id")
    debug_id: str  # lower-case UUID; one chunk's ID may recur in builds that left it unchanged
    asset_path: str  # URL path: "/assets/_index-CQSUJ9PM.js"
    sha256: str  # of `source`
    source: bytes = Field(sa_column=Column(LargeBinary, nullable=False))  # the served, injected JavaScript
    sourcemap: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class UploadToken(SQLModel, table=True):
    """A project's source-map upload token (app/sourcemaps/tokens.py). Only its SHA-256 is kept: the
    secret is shown once, when it is made."""

    __tablename__ = "upload_token"

    id: int | None = Field(default=None, primary_key=True)
    project_id: int
    label: str = ""
    prefix: str  # the secret's first 8 characters, to tell tokens apart on the console
    token_sha256: str = Field(unique=True)
    created_at: float
    created_by: str = ""  # the console user, or "cli"
    last_used_at: float | None = None
    revoked_at: float | None = None


class UploadChunk(SQLModel, table=True):
    """A chunk of an artifact bundle sentry-cli uploaded, kept until the bundle is assembled
    (app/sourcemaps/chunks.py); per project, so one token learns nothing of another's uploads."""

    __tablename__ = "upload_chunk"

    project_id: int = Field(primary_key=True, sa_column_kwargs={"autoincrement": False})
    sha1: str = Field(primary_key=True)  # of the uncompressed chunk, lower-case hex
    size: int
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    created_at: float
