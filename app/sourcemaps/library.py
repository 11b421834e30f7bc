"""The source maps of the app's own builds, in the database, where every worker finds them.

- `import_present` (backend start): every bundle the build step left on disk (bundle.py), newest
  first, at most LOOKOUT_SOURCEMAP_BUILDS; `import_bundle` imports one, then keeps only the newest
  LOOKOUT_SOURCEMAP_BUILDS builds (by when they were built). Several workers start at once and all
  import: the first insert of a build wins, the others find it there (its unique `build_id`).
- `MapLibrary` finds a chunk's map for symbolication (`MapLookup`), by debug ID or by the URL path
  the chunk was served at, from the newest build that has it. The same table holds the bundles
  other apps upload with sentry-cli (app/sourcemaps/uploads.py: builds with a `project_id`): a
  debug ID finds a project's own uploads, and for the app's own project (LOCAL_PROJECT_ID) the
  app's builds too; an asset path finds the app's builds only. Pruning touches the app's builds only.

A chunk or map over 64 MiB is refused at import (logged; the build's other files are kept).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy
from sqlalchemy import ColumnElement, delete, insert, select

from app import db
from app.settings import LOCAL_PROJECT_ID, SETTINGS
from app.sourcemaps.maps import StoredMap, normal_debug_id
from app.sourcemaps.tables import BUILDS, FILES
from reflex_lookout.protocol.envelope import STRICT_JSON
from reflex_lookout.sourcemaps import bundle, pages
from reflex_lookout.sourcemaps.bundle import BundleError, Manifest
from reflex_lookout.sourcemaps.pages import PageSource

logger = logging.getLogger(__name__)

MAX_ASSET_PATH = 2048
OWN_BUILD = BUILDS.c.project_id.is_(None)  # the app's own builds; an upload has its project
IMPORT_LOCK = 7_426_002  # PostgreSQL advisory lock key: one worker imports at a time (app/db.py has 7_426_001)


def import_present(engine: sqlalchemy.Engine, directory: Path | None = None,
                   keep: int = SETTINGS.sourcemap_builds) -> list[str]:
    """Import the newest `keep` bundles under `directory` (Reflex's web directory by default);
    returns their build IDs. A bundle that cannot be read is logged and skipped; no directory
    (dev mode, or never built) is nothing to import."""
    imported: list[str] = []
    for path, _manifest in bundle.present(directory or bundle.root())[:keep]:
        try:
            imported.append(import_bundle(engine, path, keep))
        except BundleError as exc:
            logger.warning("source map bundle not imported: %s", exc)
    return imported


def import_bundle(engine: sqlalchemy.Engine, directory: Path, keep: int = SETTINGS.sourcemap_builds) -> str:
    """Import the bundle in `directory` (idempotent), then prune to the newest `keep` builds."""
    manifest = bundle.read_manifest(directory)
    if _needless(engine, manifest, keep):
        return manifest.build_id
    rows = list(_rows(directory, manifest))
    with contextlib.suppress(sqlalchemy.exc.IntegrityError), engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({IMPORT_LOCK})")  # until commit
        # The first statement writes, so SQLite takes its write lock now, not on a later upgrade.
        build = db.inserted_id(connection.execute(insert(BUILDS).values(
            build_id=manifest.build_id, created_at=manifest.created_at,
            pages=json.dumps(pages.to_json(manifest.pages)),
        )))
        if rows:
            connection.execute(insert(FILES), [{"build": build, **row} for row in rows])
        prune(connection, keep)
        logger.info("source maps of build %s imported: %d files", manifest.build_id, len(rows))
    return manifest.build_id


def _needless(engine: sqlalchemy.Engine, manifest: Manifest, keep: int) -> bool:
    """Whether the build is there already, or older than the `keep` newest (pruned at once)."""
    with engine.connect() as connection:
        there = connection.execute(select(BUILDS.c.id).where(BUILDS.c.build_id == manifest.build_id)).first()
        oldest_kept = connection.execute(
            select(BUILDS.c.created_at).where(OWN_BUILD).order_by(BUILDS.c.created_at.desc()).offset(keep - 1).limit(1)
        ).scalar()
    return there is not None or (oldest_kept is not None and manifest.created_at < oldest_kept)


def _rows(directory: Path, manifest: Manifest) -> Iterator[dict[str, object]]:
    """The manifest's files, read and checked; a file that fails is logged and left out."""
    for file in manifest.files:
        try:
            source = bundle.read_file(bundle.inside(directory, file.js))
            sourcemap = bundle.read_file(bundle.inside(directory, file.map))
        except (BundleError, OSError) as exc:
            logger.warning("source map of %s refused: %s", file.asset_path, exc)
            continue
        if hashlib.sha256(source).hexdigest() != file.sha256:
            logger.warning("source map of %s refused: %s is not the file the build served", file.asset_path, file.js)
            continue
        yield {"debug_id": file.debug_id, "asset_path": file.asset_path, "sha256": file.sha256,
               "source": source, "sourcemap": sourcemap}


def prune(connection: sqlalchemy.Connection, keep: int) -> None:
    """Delete every build of the app's own but the newest `keep`, with its files (uploads stay)."""
    old = connection.execute(
        select(BUILDS.c.id).where(OWN_BUILD).order_by(BUILDS.c.created_at.desc(), BUILDS.c.id.desc()).offset(keep)
    ).scalars().all()
    if old:
        connection.execute(delete(FILES).where(FILES.c.build.in_(old)))
        connection.execute(delete(BUILDS).where(BUILDS.c.id.in_(old)))
        logger.info("source maps of %d older builds deleted", len(old))


class MapLibrary:
    """`MapLookup` over the database. Each call is one query: call it off the event loop."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine

    def by_debug_id(self, debug_id: str, project_id: int = LOCAL_PROJECT_ID) -> StoredMap | None:
        """The map of `debug_id` for an event of `project_id`: the project's uploads, and for the
        app's own project its builds too."""
        normalized = normal_debug_id(debug_id)
        if normalized is None:
            return None
        builds = BUILDS.c.project_id == project_id
        if project_id == LOCAL_PROJECT_ID:
            builds = sqlalchemy.or_(builds, OWN_BUILD)
        return self._newest(sqlalchemy.and_(FILES.c.debug_id == normalized, builds))

    def by_asset_path(self, asset_path: str) -> StoredMap | None:
        """The map of the app's own file served at `asset_path` (never an upload's)."""
        if not isinstance(asset_path, str) or not asset_path.startswith("/") or len(asset_path) > MAX_ASSET_PATH:
            return None
        return self._newest(sqlalchemy.and_(FILES.c.asset_path == asset_path, OWN_BUILD))

    def _newest(self, condition: ColumnElement[bool]) -> StoredMap | None:
        query = (
            select(FILES.c.debug_id, FILES.c.asset_path, BUILDS.c.build_id, FILES.c.source, FILES.c.sourcemap,
                   BUILDS.c.pages)
            .join(BUILDS, FILES.c.build == BUILDS.c.id)
            .where(condition)
            .order_by(BUILDS.c.created_at.desc(), BUILDS.c.id.desc())
            .limit(1)
        )
        with self.engine.connect() as connection:
            row = connection.execute(query).first()
        if row is None:
            return None
        return StoredMap(debug_id=row.debug_id, asset_path=row.asset_path, build_id=row.build_id,
                         source=bytes(row.source), sourcemap=bytes(row.sourcemap), pages=_pages(row.pages))


def _pages(text: str) -> dict[str, PageSource]:
    try:
        return pages.from_json(STRICT_JSON.decode(text))
    except (ValueError, RecursionError):
        return {}
