"""The part of Sentry's API that `sentry-cli sourcemaps upload` and the bundler plugins use, so that
other apps upload their source maps to a Lookout project (what sentry-cli 3.x sends, as Sentry and
Bugsink answer it):

    GET  /api/0/organizations/{org}/chunk-upload/             → the upload options (JSON)
    POST /api/0/organizations/{org}/chunk-upload/             multipart chunks → 200, empty
    POST /api/0/organizations/{org}/artifactbundle/assemble/  {checksum, chunks, projects}
                                                              → {"state", "missingChunks"[, "detail"]}
    GET  /api/0/                                              → who the token is (sentry-cli info)
    GET  /api/0/organizations/{org}/                          → 404: the new CLI then uses this host
    .../releases/...                                          → 404: Lookout keeps no releases

Every route takes an upload token (`Authorization: Bearer <token>`, app/sourcemaps/tokens.py) and no
other credential; the token names the project. Lookout has one organization: any slug works. Open
to every origin (app/origin_guard.py): a token is no ambient credential a page of another site
could ride on. Bodies are capped before they are parsed: a chunk upload at chunksPerRequest ×
chunkSize + 1 MiB (LOOKOUT_UPLOAD_CHUNK_BYTES), an assemble call at 1 MiB; every database call and
every decompression runs in a worker thread. Errors are `{"detail": "<sentence>"}`, which
sentry-cli prints ("sentry reported an error: … (http status: N)"). Answers 503 when the database
is busy: sentry-cli tries again.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import anyio.to_thread
import sqlalchemy
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from app.console import access
from app.protocol.json_answers import SHARED_FAILURES, error, shared_failure
from app.settings import SETTINGS, Settings
from app.sourcemaps import uploads
from app.sourcemaps.chunk_upload import boundary_of, read_chunks
from app.sourcemaps.chunks import ChunkStore
from app.sourcemaps.tokens import TokenRefused, TokenRow, Tokens
from reflex_lookout.protocol.asgi import read_body
from reflex_lookout.protocol.payloads import UnreadablePayload, load_object
from reflex_lookout.settings import MIB

logger = logging.getLogger(__name__)
PREFIX = "/api/0"
ORG = PREFIX + "/organizations/{org}"
PATH = re.compile(r"^/api/0/(organizations/[^/]+/(chunk-upload|artifactbundle/assemble|releases(/.*)?)/?"
                  r"|organizations/[^/]+/?|projects/[^/]+/[^/]+/releases(/.*)?|)$")
MAX_ASSEMBLE_BYTES = 1 * MIB
MULTIPART_SLACK = 1 * MIB  # boundaries and part headers, and gzip's few bytes on incompressible data
ASSEMBLES_AT_ONCE = 2  # each holds a bundle (up to LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES) in memory
CHUNK_POSTS_AT_ONCE = 4
PENDING_BUNDLES = 2  # a project's chunks not yet assembled may hold this many bundles at their cap
CONCURRENCY = 2  # the CLI's parallel chunk posts: the machine has 2 cores, SQLite one writer
ACCEPT = ["release_files", "artifact_bundles", "artifact_bundles_v2"]  # v2: ask which chunks are missing first
HOST = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?")
NO_RELEASES = "Lookout keeps no releases: set release.create/finalize/setCommits to false."
NO_ORGANIZATION = "Lookout has no organization API: any organization slug works for source-map uploads."

Handler = Callable[[Request, TokenRow], Awaitable[Response]]


def is_upload_path(path: str) -> bool:
    """Whether `path` is one of this API's (open to every origin: app/origin_guard.py)."""
    return path.startswith(PREFIX + "/") and PATH.match(path) is not None


def options(base: str, org: str, settings: Settings) -> dict[str, object]:
    """The chunk-upload options, with the absolute URL the chunks go to (the new CLI refuses a
    relative one, or another host)."""
    return {
        "url": f"{base}{PREFIX}/organizations/{quote(org, safe='')}/chunk-upload/",
        "chunkSize": settings.upload_chunk_bytes,
        "chunksPerRequest": settings.upload_chunks_per_request,
        "maxRequestSize": settings.upload_chunks_per_request * settings.upload_chunk_bytes,
        "maxFileSize": settings.upload_max_bundle_bytes,
        "concurrency": CONCURRENCY,
        "hashAlgorithm": "sha1",
        "compression": ["gzip"],
        "accept": ACCEPT,
    }


def base_url(request: Request, settings: Settings) -> str | None:
    """scheme://host the client used (https when it or a proxy on this machine says so); else
    LOOKOUT_PUBLIC_URL; None when neither is known."""
    host = request.headers.get("host", "")
    if not HOST.fullmatch(host):
        return settings.public_url or None
    https = request.url.scheme == "https" or access.forwarded_https(
        access.Caller.from_scope(request.scope), settings.trusted_proxy_hops)
    return f"{'https' if https else 'http'}://{host}"


def build(engine: sqlalchemy.Engine, settings: Settings = SETTINGS) -> Starlette:
    tokens, store = Tokens(engine), ChunkStore(engine)
    assembling = anyio.CapacityLimiter(ASSEMBLES_AT_ONCE)
    posting = anyio.CapacityLimiter(CHUNK_POSTS_AT_ONCE)

    def with_token(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        @functools.wraps(handler)
        async def checked(request: Request) -> Response:
            try:
                token = await anyio.to_thread.run_sync(tokens.check, request.headers.get("authorization"))
                return await handler(request, token)
            except (TokenRefused, uploads.UploadRefused) as exc:
                return error(exc.status, exc.sentence)
            except SHARED_FAILURES as exc:
                return shared_failure(exc, logger, "upload API")

        return checked

    @with_token
    async def chunk_options(request: Request, token: TokenRow) -> Response:
        base = base_url(request, settings)
        if base is None:
            return error(400, "The request has no usable Host header to build the chunk-upload URL from.")
        return JSONResponse(options(base, request.path_params["org"], settings))

    @with_token
    async def chunk_post(request: Request, token: TokenRow) -> Response:
        boundary = boundary_of(request.headers.get("content-type"))
        limit = settings.upload_chunks_per_request * settings.upload_chunk_bytes + MULTIPART_SLACK
        body = await read_body(request.receive, request.headers.get("content-length", ""), limit,
                               settings.body_timeout_s)
        await anyio.to_thread.run_sync(_store_chunks, store, token.project_id, body, boundary, settings,
                                       limiter=posting)
        return Response(status_code=200)

    @with_token
    async def assemble(request: Request, token: TokenRow) -> Response:
        body = await read_body(request.receive, request.headers.get("content-length", ""), MAX_ASSEMBLE_BYTES,
                               settings.body_timeout_s)
        try:
            fields = load_object(body)
        except UnreadablePayload as exc:
            return error(400, f"The assemble request is not a JSON object: {exc}")
        answer = await anyio.to_thread.run_sync(
            uploads.assemble, engine, token, fields.get("checksum"), fields.get("chunks"), fields.get("projects"),
            settings, limiter=assembling)
        found: dict[str, object] = {"state": answer.state, "missingChunks": answer.missing}
        if answer.detail:
            found["detail"] = answer.detail
        return JSONResponse(found)

    @with_token
    async def who(request: Request, token: TokenRow) -> Response:
        return JSONResponse({"user": None, "auth": {"scopes": ["project:releases"]}})

    @with_token
    async def organization(request: Request, token: TokenRow) -> Response:
        return error(404, NO_ORGANIZATION)

    @with_token
    async def releases(request: Request, token: TokenRow) -> Response:
        return error(404, NO_RELEASES)

    every = ["GET", "POST", "PUT", "DELETE"]
    return Starlette(routes=[
        Route(f"{ORG}/chunk-upload/", chunk_options, methods=["GET"]),
        Route(f"{ORG}/chunk-upload/", chunk_post, methods=["POST"]),
        Route(f"{ORG}/artifactbundle/assemble/", assemble, methods=["POST"]),
        Route(f"{PREFIX}/", who, methods=["GET"]),
        Route(f"{ORG}/", organization, methods=["GET"]),
        Route(f"{ORG}/releases/{{rest:path}}", releases, methods=every),
        Route(f"{PREFIX}/projects/{{org}}/{{project}}/releases/{{rest:path}}", releases, methods=every),
    ])


def _store_chunks(store: ChunkStore, project_id: int, body: bytes, boundary: bytes, settings: Settings) -> None:
    """Check every chunk of the request, then keep them all (or none: `UploadRefused`)."""
    chunks = read_chunks(body, boundary, settings.upload_chunks_per_request, settings.upload_chunk_bytes)
    new = store.missing(project_id, list(chunks))
    adding = sum(len(chunks[sha1]) for sha1 in new)
    cap = PENDING_BUNDLES * settings.upload_max_bundle_bytes
    if adding and store.pending_bytes(project_id) + adding > cap and (
            store.collect_garbage() == 0 or store.pending_bytes(project_id) + adding > cap):
        raise uploads.UploadRefused(413, f"Project {project_id} may keep at most {cap} bytes of chunks waiting to "
                                         "be assembled (twice LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES): assemble them, or "
                                         "wait an hour for them to be dropped.")
    for sha1 in new:
        store.put(project_id, sha1, chunks[sha1])
