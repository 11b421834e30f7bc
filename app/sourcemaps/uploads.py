"""Assembling an artifact bundle sentry-cli uploaded in chunks (`POST .../artifactbundle/assemble/`,
app/sourcemaps/upload_api.py) into the project's source maps.

`assemble` answers as Sentry's endpoint does, and as the CLIs read it (sentry-cli 3.x uploads only
the chunks named missing; the new `sentry` CLI takes `ok` as done and polls on `not_found`):

- chunks missing → `not_found` with their SHA-1s (the CLI uploads just those, then asks again);
- the bundle stored already for the project → `ok` (the same build uploaded again sends nothing);
- else, at once: the chunks joined, their SHA-1 checked against `checksum`, the zip read
  (app/sourcemaps/artifact_bundle.py), and one `sourcemap_build` row ("upload-<project>-<checksum>",
  with the project, its bytes and the token) written with a `sourcemap_file` row per JavaScript file
  and its map, in one transaction that also deletes the chunks used → `ok`; a bundle that cannot be
  used → `error` with a sentence.

Refused with `UploadRefused` (status and sentence): a body not in Sentry's schema (400), projects
other than the token's (403), a bundle over LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES or a project whose
uploads would pass LOOKOUT_UPLOAD_MAX_PROJECT_BYTES (413). The same bundle assembled twice at once:
one writes it, the other finds it there (its unique build ID) and answers `ok`. Sync (SQLAlchemy):
run it in a worker thread.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Sequence
from typing import Any, NamedTuple

import sqlalchemy
from sqlalchemy import func, insert, select, update

from app import db
from app.projects.registry import PROJECTS
from app.settings import SETTINGS, Settings
from app.sourcemaps.artifact_bundle import ArtifactBundle, ArtifactBundleError, Limits, open_bundle
from app.sourcemaps.chunks import ChunkStore
from app.sourcemaps.tables import BUILDS, FILES
from app.sourcemaps.tokens import TokenRow

logger = logging.getLogger(__name__)
SHA1 = re.compile(r"[0-9a-f]{40}")
BUILD_PREFIX = "upload-"
UPLOAD_LOCK = 7_426_003  # PostgreSQL advisory lock key (with the project id): one project's uploads count one at a time
_STRIPES = [threading.Lock() for _ in range(64)]  # one bundle assembled once at a time in this process


class UploadRefused(Exception):
    """An upload request is refused (here, and by app/sourcemaps/chunk_upload.py): its HTTP
    `status` and a `sentence` saying why."""

    def __init__(self, status: int, sentence: str) -> None:
        super().__init__(sentence)
        self.status = status
        self.sentence = sentence


class Answer(NamedTuple):
    state: str  # "ok", "not_found" or "error"
    missing: list[str]  # missingChunks
    detail: str | None = None


class _Undone(Exception):
    """Nothing of the bundle could be kept: roll back and answer `error` with the sentence."""


def build_id(project_id: int, checksum: str) -> str:
    return f"{BUILD_PREFIX}{project_id}-{checksum}"


def assemble(engine: sqlalchemy.Engine, token: TokenRow, checksum: Any, chunks: Any, projects: Any,
             settings: Settings = SETTINGS) -> Answer:
    """Assemble the bundle whose SHA-1 is `checksum` from `chunks` (SHA-1s, in order) for the
    token's project, which `projects` (the CLI's --project values) must name."""
    _check_schema(checksum, chunks, projects)
    _check_projects(engine, token.project_id, projects)
    store = ChunkStore(engine)
    store.collect_garbage()
    with _STRIPES[hash((token.project_id, checksum)) % len(_STRIPES)]:
        if _stored(engine, build_id(token.project_id, checksum)):
            return Answer("ok", [])
        sizes = store.sizes(token.project_id, chunks)
        missing = [sha1 for sha1 in dict.fromkeys(chunks) if sha1 not in sizes]
        if missing and _stored(engine, build_id(token.project_id, checksum)):
            return Answer("ok", [])  # another process assembled it (and dropped its chunks) meanwhile
        if missing:
            return Answer("not_found", missing, f"{len(missing)} of the bundle's {len(set(chunks))} chunks are not "
                                                "uploaded: upload them, then assemble again.")
        size = sum(sizes[sha1] for sha1 in chunks)
        if size > settings.upload_max_bundle_bytes:
            raise UploadRefused(413, f"The bundle is {size} bytes; the limit is {settings.upload_max_bundle_bytes} "
                                       "bytes (LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES).")
        try:
            data = store.read(token.project_id, chunks)
        except KeyError as exc:  # dropped since: by another request that assembled it, or as too old
            if _stored(engine, build_id(token.project_id, checksum)):
                return Answer("ok", [])
            return Answer("not_found", [exc.args[0]], "A chunk of the bundle went before it was assembled: upload it again.")
        found = hashlib.sha1(data).hexdigest()
        if found != checksum:
            return Answer("error", [], f"The chunks joined have the SHA-1 {found}, not the bundle's checksum {checksum}.")
        try:
            bundle = open_bundle(data, Limits(pair_bytes=settings.symbolicate_max_bytes))
            return _write(engine, token, checksum, chunks, bundle, settings)
        except (ArtifactBundleError, _Undone) as exc:
            sentence = exc.sentence if isinstance(exc, ArtifactBundleError) else str(exc)
            logger.info("artifact bundle %s of project %d not kept: %s", checksum, token.project_id, sentence)
            return Answer("error", [], sentence)


def _check_schema(checksum: Any, chunks: Any, projects: Any) -> None:
    """Sentry's schema for the fields Lookout reads (others, such as version and dist, are ignored)."""
    if not isinstance(checksum, str) or not SHA1.fullmatch(checksum):
        raise UploadRefused(400, "checksum must be the bundle's SHA-1: 40 lower-case hex digits.")
    if not isinstance(chunks, list) or not chunks or not all(isinstance(c, str) and SHA1.fullmatch(c) for c in chunks):
        raise UploadRefused(400, "chunks must be a non-empty list of the chunks' SHA-1s, 40 lower-case hex digits each.")
    if not isinstance(projects, list) or not projects or not all(isinstance(p, str) for p in projects):
        raise UploadRefused(400, "projects must be a non-empty list of project ids or names.")


def _check_projects(engine: sqlalchemy.Engine, project_id: int, projects: Sequence[str]) -> None:
    """Each of `projects` must be the token's project, by its id or its name (403)."""
    with engine.connect() as connection:
        name = connection.execute(select(PROJECTS.c.name).where(PROJECTS.c.id == project_id)).scalar() or ""
    other = next((p for p in projects if p.strip() not in (str(project_id), name)), None)
    if other is not None:
        raise UploadRefused(403, f"This token uploads to project {project_id} ({name}) only, not to "
                                   f"{other[:100]!r}: use --project {project_id}.")


def _stored(engine: sqlalchemy.Engine, build: str) -> bool:
    with engine.connect() as connection:
        return connection.execute(select(BUILDS.c.id).where(BUILDS.c.build_id == build)).first() is not None


def _write(engine: sqlalchemy.Engine, token: TokenRow, checksum: str, chunks: Sequence[str],
           bundle: ArtifactBundle, settings: Settings) -> Answer:
    """The bundle's rows, in one transaction with the deletion of its chunks."""
    project_id, cap = token.project_id, settings.upload_max_project_bytes
    try:
        with engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({UPLOAD_LOCK}, {int(project_id)})")
            # The first statement writes, so SQLite takes its write lock now, not on a later upgrade.
            build = db.inserted_id(connection.execute(insert(BUILDS).values(
                build_id=build_id(project_id, checksum), created_at=time.time(), pages="{}",
                project_id=project_id, bytes=0, token_id=token.id,
            )))
            kept = int(connection.execute(select(func.coalesce(func.sum(BUILDS.c.bytes), 0))
                                          .where(BUILDS.c.project_id == project_id)).scalar_one())
            added = files = 0
            for pair in bundle.pairs():
                added += len(pair.source) + len(pair.sourcemap)
                if kept + added > cap:
                    raise UploadRefused(413, f"Project {project_id} keeps {kept} bytes of uploaded source maps; "
                                               f"this bundle's would pass its limit of {cap} bytes "
                                               "(LOOKOUT_UPLOAD_MAX_PROJECT_BYTES).")
                connection.execute(insert(FILES).values(
                    build=build, debug_id=pair.debug_id, asset_path=pair.asset_path,
                    sha256=hashlib.sha256(pair.source).hexdigest(), source=pair.source, sourcemap=pair.sourcemap))
                files += 1
            if not files:
                raise _Undone("No file of the bundle could be kept: " + "; ".join(bundle.refused[:3]) + ".")
            connection.execute(update(BUILDS).where(BUILDS.c.id == build).values(bytes=added))
            ChunkStore(engine).delete(project_id, chunks, connection)
    except sqlalchemy.exc.IntegrityError:
        if _stored(engine, build_id(project_id, checksum)):
            return Answer("ok", [])  # another request assembled it first
        raise
    left_out = f"{len(bundle.refused)} files left out: " + "; ".join(bundle.refused[:3]) if bundle.refused else None
    logger.info("artifact bundle %s of project %d kept: %d files, %d bytes%s", checksum, project_id, files, added,
                f" ({left_out})" if left_out else "")
    return Answer("ok", [], left_out)
