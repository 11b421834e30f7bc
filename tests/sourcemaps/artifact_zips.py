"""Artifact bundles for the upload tests, made with `zipfile` the way the CLIs lay them out
(as the real ones were seen to): sentry-cli's `files/_/_/...` members with lower-case `sourcemap`
headers and debug IDs on the maps too, or the new CLI's `_/_/...` with `Sourcemap` and maps paired
by that header only; and the chunks sentry-cli would cut one into."""

from __future__ import annotations

import hashlib
import io
import json
import uuid
import zipfile
from dataclasses import dataclass, field

import sqlalchemy

from app.sourcemaps.chunks import ChunkStore
from app.sourcemaps.tokens import TokenRow
from app.sourcemaps.uploads import assemble, build_id


@dataclass(frozen=True)
class JsFile:
    """A minified file with its map, as the manifest names it ("~/assets/main.js")."""
    url: str
    source: bytes
    sourcemap: bytes
    debug_id: str = field(default_factory=lambda: str(uuid.uuid4()))


def js_file(name: str, text: str = "minified") -> JsFile:
    return JsFile(f"~/assets/{name}", f"// {text} {name}\n".encode(), json.dumps({"version": 3, "file": name}).encode())


def member(url: str, new_cli: bool) -> str:
    return ("" if new_cli else "files/") + "_/_/" + url.removeprefix("~/")


def artifact_bundle(*files: JsFile, new_cli: bool = False, manifest: dict[str, object] | None = None,
                    extra: dict[str, bytes] | None = None, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A bundle zip holding `files` (and `extra` members as they are); `manifest` replaces the
    one made from the files."""
    entries: dict[str, object] = {}
    contents: dict[str, bytes] = dict(extra or {})
    for file in files:
        name, map_url = member(file.url, new_cli), file.url + ".map"
        map_name = member(map_url, new_cli)
        header = "Sourcemap" if new_cli else "sourcemap"
        entries[name] = {"type": "minified_source", "url": file.url,
                         "headers": {"debug-id": file.debug_id, header: map_url.rpartition("/")[2]}}
        entries[map_name] = {"type": "source_map", "url": map_url,
                             "headers": {} if new_cli else {"debug-id": file.debug_id}}
        contents[name], contents[map_name] = file.source, file.sourcemap
    made = {"org": "lookout", "project": "2", "files": entries}
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w", compression) as archive:
        archive.writestr("manifest.json", json.dumps(manifest if manifest is not None else made))
        for name, data in contents.items():
            archive.writestr(name, data)
    return output.getvalue()


def cut(data: bytes, size: int) -> list[bytes]:
    """The chunks sentry-cli cuts `data` into: slices of `size`."""
    return [data[start:start + size] for start in range(0, len(data), size)]


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def put_chunks(store: ChunkStore, project_id: int, data: bytes, size: int = 1024) -> list[str]:
    """Store `data`'s chunks for the project, as the chunk upload does; their SHA-1s in order."""
    names = []
    for chunk in cut(data, size):
        store.put(project_id, sha1(chunk), chunk)
        names.append(sha1(chunk))
    return names


def uploaded(engine: sqlalchemy.Engine, token: TokenRow, *files: JsFile) -> str:
    """`files` uploaded as sentry-cli does (chunks, then assemble) for the token's project; the build ID."""
    data = artifact_bundle(*files)
    names = put_chunks(ChunkStore(engine), token.project_id, data)
    assert assemble(engine, token, sha1(data), names, [str(token.project_id)]).state == "ok"
    return build_id(token.project_id, sha1(data))
