"""app/sourcemaps/upload_api.py over ASGI, on a real SQLite database with real tokens: the
conversation sentry-cli has with it (options, assemble, chunks as multipart `file_gzip` parts,
assemble again), and every refusal a status with a `{"detail": sentence}` — tokens, chunk and
body caps, malformed bodies, other projects, releases."""

from __future__ import annotations

import dataclasses
import gzip
import json
import secrets
from pathlib import Path

import httpx
import pytest
import sqlalchemy

from app import db
from app.origin_guard import OriginGuard
from app.projects.registry import Projects
from app.settings import Settings
from app.sourcemaps import upload_api
from app.sourcemaps.chunks import ChunkStore
from app.sourcemaps.library import MapLibrary
from app.sourcemaps.tokens import NO_TOKEN, Tokens
from tests.sourcemaps.artifact_zips import artifact_bundle, cut, js_file, sha1

pytestmark = pytest.mark.anyio

CHUNK = 1024
SETTINGS = dataclasses.replace(Settings.from_env({}), upload_chunk_bytes=CHUNK, upload_chunks_per_request=2)
ORG = "/api/0/organizations/acme"


@pytest.fixture
def engine(tmp_path: Path) -> sqlalchemy.Engine:
    eng = db.engine(f"sqlite:///{tmp_path / 'uploads.db'}")
    db.migrate(eng)
    Projects(eng).local_dsn()
    Projects(eng).add("Billing")
    return eng


@pytest.fixture
def secret(engine: sqlalchemy.Engine) -> str:
    return Tokens(engine).add(2, "billing CI")[1]


def client(engine: sqlalchemy.Engine, secret: str | None = None, settings: Settings = SETTINGS,
           base_url: str = "http://lookout.test:8000", address: str = "203.0.113.9") -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=OriginGuard(upload_api.build(engine, settings)), client=(address, 40000))
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    return httpx.AsyncClient(transport=transport, base_url=base_url, headers=headers)


def multipart(*parts: tuple[str, str, bytes], boundary: str = "------------------------OwW7TtEPCiWxJwaiVLR9Lp",
              closed: bool = True) -> tuple[bytes, dict[str, str]]:
    """A body as sentry-cli sends it: one part per (field, filename, data)."""
    body = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
        f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n"
        for field, name, data in parts)
    body += f"--{boundary}--\r\n".encode() if closed else b""
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def gzipped(chunk: bytes) -> tuple[str, str, bytes]:
    return "file_gzip", sha1(chunk), gzip.compress(chunk)


def detail(answer: httpx.Response, status: int) -> str:
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"] == "application/json"
    return answer.json()["detail"]


async def test_sentry_clis_conversation_uploads_the_missing_chunks_once_and_assembles_the_bundle(
        engine: sqlalchemy.Engine, secret: str) -> None:
    main = js_file("main.js", secrets.token_hex(1500))  # not compressible: 3 chunks at least
    data = artifact_bundle(main)
    chunks = cut(data, CHUNK)
    assert len(chunks) > 2
    request = {"checksum": sha1(data), "chunks": [sha1(c) for c in chunks], "projects": ["2"], "version": "ignored"}
    async with client(engine, secret) as http:
        options = (await http.get(f"{ORG}/chunk-upload/")).json()
        assert options == {
            "url": "http://lookout.test:8000/api/0/organizations/acme/chunk-upload/", "chunkSize": CHUNK,
            "chunksPerRequest": 2, "maxRequestSize": 2 * CHUNK, "maxFileSize": SETTINGS.upload_max_bundle_bytes,
            "concurrency": 2, "hashAlgorithm": "sha1", "compression": ["gzip"],
            "accept": ["release_files", "artifact_bundles", "artifact_bundles_v2"]}
        first = (await http.post(f"{ORG}/artifactbundle/assemble/", json=request)).json()
        assert first["state"] == "not_found" and first["missingChunks"] == request["chunks"]
        for batch in (chunks[:2], chunks[2:]):
            body, headers = multipart(*map(gzipped, batch))
            answer = await http.post(options["url"], content=body, headers=headers)
            assert answer.status_code == 200 and answer.content == b""
        assert (await http.post(f"{ORG}/artifactbundle/assemble/", json=request)).json() == {
            "state": "ok", "missingChunks": []}
        # The same bundle again (sentry-cli's second run): nothing missing, nothing to upload.
        assert (await http.post(f"{ORG}/artifactbundle/assemble/", json=request)).json() == {
            "state": "ok", "missingChunks": []}
    found = MapLibrary(engine).by_debug_id(main.debug_id, 2)
    assert found is not None and found.source == main.source


async def test_the_options_url_is_the_host_and_scheme_the_client_used(engine: sqlalchemy.Engine, secret: str) -> None:
    async with client(engine, secret, base_url="https://maps.example.com") as http:
        assert (await http.get(f"{ORG}/chunk-upload/")).json()["url"] == \
            "https://maps.example.com/api/0/organizations/acme/chunk-upload/"
    async with client(engine, secret, address="127.0.0.1") as http:  # a TLS proxy on this machine
        answer = await http.get("/api/0/organizations/my%20org/chunk-upload/", headers={"X-Forwarded-Proto": "https"})
        assert answer.json()["url"] == "https://lookout.test:8000/api/0/organizations/my%20org/chunk-upload/"
    async with client(engine, secret) as http:
        answer = await http.get(f"{ORG}/chunk-upload/", headers={"Host": "evil.example/x?"})
        assert "no usable Host header" in detail(answer, 400)


async def test_a_missing_unknown_or_revoked_token_is_refused_with_401(engine: sqlalchemy.Engine, secret: str) -> None:
    async with client(engine) as http:
        assert detail(await http.get(f"{ORG}/chunk-upload/"), 401) == NO_TOKEN
    async with client(engine, "0" * 64) as http:
        assert "not known to this Lookout" in detail(await http.post(f"{ORG}/artifactbundle/assemble/", json={}), 401)
    token_id = Tokens(engine).list(2)[0].id
    Tokens(engine).revoke(token_id)
    async with client(engine, secret) as http:
        body, headers = multipart(gzipped(b"chunk"))
        assert "was revoked on" in detail(await http.post(f"{ORG}/chunk-upload/", content=body, headers=headers), 401)
    assert ChunkStore(engine).pending_bytes(2) == 0


async def test_a_token_is_for_its_own_project_only(engine: sqlalchemy.Engine, secret: str) -> None:
    async with client(engine, secret) as http:
        answer = await http.post(f"{ORG}/artifactbundle/assemble/",
                                 json={"checksum": "a" * 40, "chunks": ["a" * 40], "projects": ["1"]})
        assert detail(answer, 403) == "This token uploads to project 2 (Billing) only, not to '1': use --project 2."


@pytest.mark.parametrize("parts, status, words", [
    ([gzipped(b"z" * (CHUNK + 1))], 413, f"is over {CHUNK} bytes"),
    ([("file", sha1(b"r" * (CHUNK + 1)), b"r" * (CHUNK + 1))], 413, f"is over {CHUNK} bytes"),
    ([("file_gzip", "a" * 40, gzip.compress(b"chunk"))], 400, f"Checksum mismatch: the chunk named {'a' * 40} has the SHA-1"),
    ([("file", "chunk.bin", b"chunk")], 400, "filename must be its SHA-1"),
    ([("data", sha1(b"chunk"), b"chunk")], 400, "chunks are sent as file or file_gzip parts"),
    ([("file_gzip", sha1(b"chunk"), b"not gzip")], 400, "not valid compressed data"),
    ([gzipped(b"1"), gzipped(b"2"), gzipped(b"3")], 400, "at most 2 chunks (chunksPerRequest)"),
    ([gzipped(b"good"), ("file_gzip", "b" * 40, gzip.compress(b"bad"))], 400, "Checksum mismatch"),
])
async def test_bad_chunks_refuse_the_whole_request_with_a_sentence(
        engine: sqlalchemy.Engine, secret: str, parts: list[tuple[str, str, bytes]], status: int, words: str) -> None:
    body, headers = multipart(*parts)
    async with client(engine, secret) as http:
        assert words in detail(await http.post(f"{ORG}/chunk-upload/", content=body, headers=headers), status)
    assert ChunkStore(engine).pending_bytes(2) == 0  # all or nothing


async def test_bodies_are_capped_and_must_be_what_they_say(engine: sqlalchemy.Engine, secret: str) -> None:
    limit = 2 * CHUNK + upload_api.MULTIPART_SLACK
    async with client(engine, secret) as http:
        body, headers = multipart(gzipped(b"chunk"))
        big = body + b"\0" * limit
        assert f"the limit is {limit} bytes" in detail(await http.post(f"{ORG}/chunk-upload/", content=big, headers=headers), 413)

        async def streamed():  # no Content-Length: capped as it arrives
            yield body
            yield b"\0" * limit

        answer = await http.post(f"{ORG}/chunk-upload/", content=streamed(), headers=headers)
        assert f"exceeds the limit of {limit} bytes" in detail(answer, 413)
        answer = await http.post(f"{ORG}/chunk-upload/", content=b"chunk", headers={"Content-Type": "application/octet-stream"})
        assert detail(answer, 400) == "Chunks are sent as multipart/form-data, with a boundary."
        cut_short, headers = multipart(gzipped(b"chunk"), closed=False)
        assert "ends before its closing boundary" in detail(
            await http.post(f"{ORG}/chunk-upload/", content=cut_short, headers=headers), 400)
        assemble = f"{ORG}/artifactbundle/assemble/"
        assert "not a JSON object" in detail(await http.post(assemble, content=b"[1, 2]"), 400)
        assert "not a JSON object" in detail(await http.post(assemble, content=b"{checksum"), 400)
        huge = json.dumps({"checksum": "a" * 40, "chunks": ["a" * 40] * 30_000, "projects": ["2"]})
        assert "the limit is 1048576 bytes" in detail(await http.post(assemble, content=huge), 413)
    assert ChunkStore(engine).pending_bytes(2) == 0


async def test_whoami_organizations_and_releases_answer_as_the_plugins_need(engine: sqlalchemy.Engine, secret: str) -> None:
    async with client(engine, secret) as http:
        assert (await http.get("/api/0/")).json() == {"user": None, "auth": {"scopes": ["project:releases"]}}
        assert detail(await http.get(f"{ORG}/"), 404) == upload_api.NO_ORGANIZATION
        assert detail(await http.post(f"{ORG}/releases/", json={"version": "1"}), 404) == upload_api.NO_RELEASES
        assert detail(await http.put(f"{ORG}/releases/1.0/", json={}), 404) == upload_api.NO_RELEASES
        assert detail(await http.post("/api/0/projects/acme/web/releases/", json={}), 404) == upload_api.NO_RELEASES
    async with client(engine) as http:
        assert detail(await http.get("/api/0/"), 401) == NO_TOKEN


async def test_pages_of_other_sites_reach_the_upload_api_which_takes_only_its_token(
        engine: sqlalchemy.Engine, secret: str) -> None:
    assert upload_api.is_upload_path(f"{ORG}/chunk-upload/") and upload_api.is_upload_path("/api/0/")
    assert not upload_api.is_upload_path("/api/0/envelope/") and not upload_api.is_upload_path("/api/inbox/issues")
    async with client(engine, secret) as http:
        answer = await http.get(f"{ORG}/chunk-upload/", headers={"Origin": "https://elsewhere.example"})
        assert answer.status_code == 200  # not the origin guard's 403: the token is what counts
    async with client(engine) as http:
        answer = await http.get(f"{ORG}/chunk-upload/", headers={"Origin": "https://elsewhere.example",
                                                                  "Cookie": "lookout_session=whatever"})
        assert detail(answer, 401) == NO_TOKEN  # a console session is no upload token


async def test_chunks_waiting_to_be_assembled_are_capped_per_project(engine: sqlalchemy.Engine, secret: str) -> None:
    settings = dataclasses.replace(SETTINGS, upload_max_bundle_bytes=2 * CHUNK)  # chunks waiting: 2 bundles, 4 KiB
    chunks = [bytes([n]) * CHUNK for n in range(5)]
    async with client(engine, secret, settings) as http:
        for batch in (chunks[:2], chunks[2:4]):
            body, headers = multipart(*map(gzipped, batch))
            assert (await http.post(f"{ORG}/chunk-upload/", content=body, headers=headers)).status_code == 200
        body, headers = multipart(gzipped(chunks[4]))
        answer = await http.post(f"{ORG}/chunk-upload/", content=body, headers=headers)
        assert "may keep at most 4096 bytes of chunks waiting to be assembled" in detail(answer, 413)
        body, headers = multipart(gzipped(chunks[0]))  # one it has: nothing more to keep
        assert (await http.post(f"{ORG}/chunk-upload/", content=body, headers=headers)).status_code == 200
    assert ChunkStore(engine).pending_bytes(2) == 4 * CHUNK
