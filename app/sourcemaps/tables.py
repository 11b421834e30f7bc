"""The source-map tables (app/models.py), by the names the source-map modules use."""

from __future__ import annotations

from app.models import SourceMapBuild, SourceMapFile, UploadChunk, UploadToken

BUILDS = SourceMapBuild.__table__
FILES = SourceMapFile.__table__
CHUNKS = UploadChunk.__table__
TOKENS = UploadToken.__table__
