"""The pinned sentry-cli uploads another app's source maps to a running Lookout: `app.standalone.inbox`
under granian on loopback (a real SQLite file), its upload API taking tokens made with
`Tokens(engine).add(project)`. A two-module app bundled and minified by the pinned esbuild, injected
with `sentry-cli sourcemaps inject`, uploaded with `sentry-cli sourcemaps upload`; the same upload
again sends no chunk; a browser error of that app posted to the project's store endpoint comes out
with the original file and function. Bad, revoked and other projects' tokens, a bundle over its cap,
an oversized chunk and an assemble naming a missing chunk get a status and a sentence."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import sqlalchemy
from sqlalchemy import select

from app import db
from app.ingest.store import InboxStore
from app.projects.registry import Project, Projects
from app.sourcemaps.own_build import SENTRY_CLI
from app.sourcemaps.tables import BUILDS, CHUNKS, FILES
from app.sourcemaps.tokens import Tokens
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_DSN
from tests.reliability.cluster import Tunnels
from tests.sourcemaps.real_build import ESBUILD
from tests.sourcemaps.reflex_like_build import need_tools
from tests.sourcemaps.second_lookout import frames_of, stored_event

CHUNK_BYTES = 2048  # several chunks for the small app's bundle
MAX_BUNDLE_BYTES = 64 * 1024
APP_URL = "https://billing.example.com"  # where the other app's pages are served
MODULES = {
    "main.js": 'import { explode } from "./util.js";\n'  # `boom` is what test_to_sentry's runner calls
               "export function boom(count) {\n  return explode(count * 2);\n}\n",
    "util.js": "export function explode(value) {\n"
               '  throw new Error("kaboom " + value);\n}\n',
}
@dataclass
class Lookout:
    server: Tunnels
    engine: sqlalchemy.Engine
    billing: Project
    token: str

    def builds(self) -> list[tuple[int | None, str, dict[str, str]]]:
        """Each build's project, build ID and files (debug ID → asset path)."""
        with self.engine.connect() as connection:
            builds = connection.execute(select(BUILDS.c.id, BUILDS.c.project_id, BUILDS.c.build_id)
                                        .order_by(BUILDS.c.id)).all()
            return [(project_id, build_id, dict(connection.execute(
                select(FILES.c.debug_id, FILES.c.asset_path).where(FILES.c.build == build)).all()))
                for build, project_id, build_id in builds]


@pytest.fixture(scope="module")
def lookout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lookout]:
    need_tools()
    tmp = tmp_path_factory.mktemp("lookout")
    url = f"sqlite:///{tmp / 'lookout.db'}"
    engine = db.engine(url)
    db.migrate(engine)
    InboxStore(engine).ensure_project(Dsn.parse(LOCAL_DSN))  # project 1, with the key the server is given
    billing = Projects(engine).add("Billing")
    server = Tunnels(env={
        "DATABASE_URL": url, "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN, "LOOKOUT_SERVER_MONITORING": "off",
        "REFLEX_WEB_WORKDIR": str(tmp / "web"), "LOOKOUT_UPLOAD_CHUNK_BYTES": str(CHUNK_BYTES),
        "LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES": str(MAX_BUNDLE_BYTES),
    }, log=tmp / "lookout.log", workers=1, module="app.standalone.inbox:app")
    server.start()
    try:
        yield Lookout(server, engine, billing, Tokens(engine).add(billing.id, "billing CI")[1])
    finally:
        server.stop()
        engine.dispose()


def built_app(work: Path, extra: str = "") -> Path:
    """The app bundled, minified and injected: `dist/assets/main.js` and its map; `dist`."""
    sources = work / "src"
    sources.mkdir(parents=True)
    for name, text in MODULES.items():
        (sources / name).write_text(text + (extra if name == "main.js" else ""))
    dist = work / "dist"
    subprocess.run([str(ESBUILD), str(sources / "main.js"), "--bundle", "--format=esm", "--minify", "--sourcemap",
                    f"--outdir={dist / 'assets'}", "--log-level=warning"], check=True)
    subprocess.run([str(SENTRY_CLI), "sourcemaps", "inject", str(dist)], check=True, capture_output=True,
                   env=cli_env(work, ""))
    return dist


def cli_env(home: Path, token: str) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "SENTRY_AUTH_TOKEN": token,
            "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "true"}


def upload(lookout: Lookout, dist: Path, token: str, project: str | int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SENTRY_CLI), "--url", lookout.server.url, "sourcemaps", "upload", "--org", "x", "--project", str(project),
         str(dist)],
        env=cli_env(dist.parent, token), cwd=dist.parent, capture_output=True, text=True, timeout=120)


def debug_id_of(dist: Path) -> str:
    return json.loads((dist / "assets" / "main.js.map").read_text())["debugId"]


def frames_of_app(dist: Path) -> list[dict]:
    """The frames, outermost first, of the app's error under node, named by the URL the app serves
    the bundle at, as the browser SDK sends them."""
    return frames_of(dist / "assets" / "main.js", f"{APP_URL}/assets/main.js", dist.parent)


def test_sentry_cli_uploads_once_and_the_apps_errors_show_the_original_source(lookout: Lookout, tmp_path: Path) -> None:
    dist = built_app(tmp_path)
    debug_id = debug_id_of(dist)

    first = upload(lookout, dist, lookout.token, lookout.billing.id)

    assert first.returncode == 0, first.stderr
    assert "File processing complete" in first.stderr + first.stdout
    [(project_id, build_id, files)] = [b for b in lookout.builds() if b[0] == lookout.billing.id]
    assert build_id.startswith(f"upload-{lookout.billing.id}-") and files == {debug_id: "/assets/main.js"}
    # Again: every chunk is there, none is sent (sentry-cli says so), nothing is stored twice.
    again = upload(lookout, dist, lookout.token, lookout.billing.id)  # the same command again
    assert again.returncode == 0, again.stderr
    assert "Nothing to upload, all files are on the server" in again.stderr + again.stdout
    assert [b for b in lookout.builds() if b[0] == lookout.billing.id] == [(project_id, build_id, files)]
    with lookout.engine.connect() as connection:
        assert connection.execute(select(CHUNKS.c.sha1).where(CHUNKS.c.project_id == lookout.billing.id)).all() == []

    # A browser error of that app, as its SDK reports it to the Billing project.
    event_id = uuid.uuid4().hex
    url = f"{APP_URL}/assets/main.js"
    event = {"event_id": event_id, "platform": "javascript", "level": "error",
             "exception": {"values": [{"type": "Error", "value": "kaboom 42", "stacktrace": {"frames": frames_of_app(dist)}}]},
             "debug_meta": {"images": [{"type": "sourcemap", "code_file": url, "debug_id": debug_id}]}}
    answer = httpx.post(f"{lookout.server.url}/api/{lookout.billing.id}/store/?sentry_key={lookout.billing.public_key}",
                        json=event, timeout=30)
    assert answer.status_code == 200, answer.text
    frames = stored_event(lookout, event_id)["exception"]["values"][0]["stacktrace"]["frames"]
    assert [(f["filename"], f.get("function"), f["lineno"], f["in_app"]) for f in frames] == [
        ("src/main.js", "boom", 3, True), ("src/util.js", "explode", 2, True)]
    assert frames[-1]["context_line"] == '  throw new Error("kaboom " + value);'
    assert frames[-1]["data"]["sourcemap"] == {"debug_id": debug_id, "build_id": build_id, "resolved_with": "debug_id"}


def test_an_event_of_another_project_is_not_mapped_with_these_maps(lookout: Lookout, tmp_path: Path) -> None:
    dist = built_app(tmp_path, "// another build\n")
    assert upload(lookout, dist, lookout.token, lookout.billing.id).returncode == 0
    event_id = uuid.uuid4().hex
    url = f"{APP_URL}/assets/main.js"
    event = {"event_id": event_id, "platform": "javascript", "level": "error",
             "exception": {"values": [{"type": "Error", "value": "kaboom 42", "stacktrace": {"frames": frames_of_app(dist)}}]},
             "debug_meta": {"images": [{"type": "sourcemap", "code_file": url, "debug_id": debug_id_of(dist)}]}}
    local_key = Dsn.parse(LOCAL_DSN).public_key
    answer = httpx.post(f"{lookout.server.url}/api/1/store/?sentry_key={local_key}", json=event, timeout=30)
    assert answer.status_code == 200, answer.text
    [thrower] = stored_event(lookout, event_id)["exception"]["values"][0]["stacktrace"]["frames"][-1:]
    assert thrower["filename"] == url
    assert thrower["data"]["sourcemap_error"] == f"No source map has the debug ID {debug_id_of(dist)}."


def test_bad_revoked_and_other_projects_tokens_fail_the_upload_with_lookouts_sentence(
        lookout: Lookout, tmp_path: Path) -> None:
    dist = built_app(tmp_path, "// yet another build\n")
    bad = upload(lookout, dist, "0" * 64, lookout.billing.id)
    assert bad.returncode == 1
    assert "This upload token is not known to this Lookout" in bad.stderr and "(http status: 401)" in bad.stderr
    row, revoked = Tokens(lookout.engine).add(lookout.billing.id, "old CI")
    Tokens(lookout.engine).revoke(row.id)
    gone = upload(lookout, dist, revoked, lookout.billing.id)
    assert gone.returncode == 1 and "This upload token was revoked on" in gone.stderr and "(http status: 401)" in gone.stderr
    elsewhere = upload(lookout, dist, lookout.token, 1)
    assert elsewhere.returncode == 1
    assert (f"This token uploads to project {lookout.billing.id} (Billing) only, not to '1': "
            f"use --project {lookout.billing.id}. (http status: 403)") in elsewhere.stderr
    assert debug_id_of(dist) not in {d for *_, files in lookout.builds() for d in files}


def test_a_bundle_over_its_cap_fails_the_upload_with_413(lookout: Lookout, tmp_path: Path) -> None:
    project = Projects(lookout.engine).add("Big app")  # its pending chunks stay its own
    token = Tokens(lookout.engine).add(project.id)[1]
    noise = "".join(f'"{uuid.uuid4().hex}",' for _ in range(2500))  # ~90 KB, compressed, twice
    dist = built_app(tmp_path, f"export const noise = [{noise}];\n")
    big = upload(lookout, dist, token, project.id)
    assert big.returncode == 1, big.stderr
    assert f"the limit is {MAX_BUNDLE_BYTES} bytes (LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES). (http status: 413)" in big.stderr
    assert [b for b in lookout.builds() if b[0] == project.id] == []


def test_an_oversized_chunk_and_an_assemble_naming_a_missing_chunk(lookout: Lookout) -> None:
    headers = {"Authorization": f"Bearer {lookout.token}"}
    base = f"{lookout.server.url}/api/0/organizations/x"
    chunk = b"a" * (CHUNK_BYTES + 1)
    name = hashlib.sha1(chunk).hexdigest()
    boundary = "b0undary"
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="file_gzip"; filename="{name}"\r\n\r\n'.encode()
            + gzip.compress(chunk) + f"\r\n--{boundary}--\r\n".encode())
    answer = httpx.post(f"{base}/chunk-upload/", content=body, timeout=30,
                        headers={**headers, "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert answer.status_code == 413
    assert answer.json() == {"detail": f"Chunk {name} is over {CHUNK_BYTES} bytes (the chunkSize this Lookout gives; "
                                       "LOOKOUT_UPLOAD_CHUNK_BYTES)."}
    missing = hashlib.sha1(b"never uploaded").hexdigest()
    answer = httpx.post(f"{base}/artifactbundle/assemble/", headers=headers, timeout=30,
                        json={"checksum": missing, "chunks": [missing], "projects": [str(lookout.billing.id)]})
    assert answer.status_code == 200
    assert answer.json()["state"] == "not_found" and answer.json()["missingChunks"] == [missing]
    assert answer.json()["detail"]
