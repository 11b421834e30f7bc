"""The source-map tables (app/models.py), by the names the source-map modules use."""

from __future__ import annotations

from app.sourcemaps.models import SourceMapBuild, SourceMapFile, UploadChunk, UploadToken
from app.tables import table_of

BUILDS = table_of(SourceMapBuild)
FILES = table_of(SourceMapFile)
CHUNKS = table_of(UploadChunk)
TOKENS = table_of(UploadToken)
