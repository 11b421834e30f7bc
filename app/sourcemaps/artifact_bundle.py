"""An artifact bundle, as `sentry-cli sourcemaps upload` sends it: a zip of JavaScript files and
their source maps, with a `manifest.json` that names each member and gives its URL, type and
headers (`debug-id`, `sourcemap`; any case).

sentry-cli puts the files under `files/_/_/...`, the new `sentry` CLI under `_/_/...`: the member
names are the manifest's keys, whatever they are. Each `minified_source` with a debug ID is paired
with its map: the `source_map` with the same debug ID, else the file its `sourcemap` header names
(relative to its URL). Symbolication needs both files (app/sourcemaps/map_cache.py), so a JavaScript
file without its map is left out.

A zip is read with caps, never trusting the sizes it declares: at most MAX_ENTRIES members (counted
in its central directory before it is opened), a manifest of at most MAX_MANIFEST_BYTES, each file
at most MAX_FILE_BYTES decompressed (a larger one is left out, and said so in `refused`), all of
them at most MAX_TOTAL_BYTES. A pair over the bounds symbolication parses within (its bytes, lines
and tokens: app/sourcemaps/map_bounds.py) is left out too, with the bound's sentence: it could
never be used. Anything else wrong with the bundle as a whole raises `ArtifactBundleError` with a
sentence.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from app.settings import SETTINGS
from app.sourcemaps.map_bounds import measure, refusal
from app.sourcemaps.maps import normal_debug_id
from reflex_lookout.protocol.payloads import UnreadablePayload, load_object
from reflex_lookout.sourcemaps.bundle import MAX_FILE_BYTES

MIB = 1024 * 1024
MAX_ENTRIES = 10_000
MAX_MANIFEST_BYTES = 16 * MIB
MAX_TOTAL_BYTES = 1024 * MIB
MAX_URL = 2048
MANIFEST = "manifest.json"
READ_STEP = MIB
_CENTRAL_ENTRY = b"PK\x01\x02"
_END = struct.Struct("<4s4H2LH")  # end of central directory
_END64_LOCATOR = struct.Struct("<4sLQL")
_END64 = struct.Struct("<4sQ2H2L4Q")


class ArtifactBundleError(Exception):
    """The bundle cannot be used; `sentence` says why."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


@dataclass(frozen=True)
class Pair:
    """A JavaScript file with its source map, as the bundle holds them."""

    debug_id: str  # normalised (app/sourcemaps/maps.py)
    url: str  # as the manifest gives it: "~/assets/main.js", "https://cdn.example.com/app.js"
    source: bytes
    sourcemap: bytes

    @property
    def asset_path(self) -> str:
        """The URL's path ("/assets/main.js"), for display."""
        return url_path(self.url)


@dataclass(frozen=True)
class _Wanted:
    debug_id: str
    url: str
    source_member: str
    map_member: str


@dataclass
class Limits:
    entries: int = MAX_ENTRIES
    manifest_bytes: int = MAX_MANIFEST_BYTES
    file_bytes: int = MAX_FILE_BYTES
    total_bytes: int = MAX_TOTAL_BYTES
    pair_bytes: int = SETTINGS.symbolicate_max_bytes  # a file and its map (LOOKOUT_SYMBOLICATE_MAX_BYTES)


@dataclass
class ArtifactBundle:
    """An opened bundle: `pairs()` reads its files one pair at a time; `refused` says what was left
    out and why."""

    archive: zipfile.ZipFile
    wanted: list[_Wanted]
    limits: Limits
    refused: list[str] = field(default_factory=list)
    read_bytes: int = 0

    def pairs(self) -> Iterator[Pair]:
        for wanted in self.wanted:
            try:
                source = self._read(wanted.source_member)
                sourcemap = self._read(wanted.map_member)
            except _FileRefused as exc:
                self.refused.append(f"{wanted.url} left out: {exc}")
                continue
            too_costly = refusal(measure(source, sourcemap), self.limits.pair_bytes)
            if too_costly is not None:
                self.refused.append(f"{wanted.url} left out: its source map is too costly to use: {too_costly}")
                continue
            yield Pair(wanted.debug_id, wanted.url, source, sourcemap)

    def _read(self, member: str) -> bytes:
        try:
            info = self.archive.getinfo(member)
        except KeyError:
            raise _FileRefused(f"the manifest names {member[:200]!r}, which the zip does not hold") from None
        allowance = self.limits.total_bytes - self.read_bytes
        try:
            data = read_member(self.archive, info, min(self.limits.file_bytes, allowance))
        except _Over:
            if allowance < self.limits.file_bytes:
                raise ArtifactBundleError(
                    f"The bundle's files come to more than {self.limits.total_bytes} bytes decompressed.") from None
            raise _FileRefused(f"{member[:200]} is over {self.limits.file_bytes} bytes decompressed") from None
        self.read_bytes += len(data)
        return data


class _FileRefused(Exception):
    """One file of the bundle cannot be used (its pair is left out)."""


class _Over(Exception):
    """A member decompresses to more than it may."""


def open_bundle(data: bytes, limits: Limits | None = None) -> ArtifactBundle:
    """The bundle in `data` (the zip's bytes), its manifest read and its pairs found."""
    limits = limits or Limits()
    entries = count_entries(data)
    if entries > limits.entries:
        raise ArtifactBundleError(f"The bundle holds {entries} files; at most {limits.entries} are read.")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, NotImplementedError) as exc:
        raise ArtifactBundleError(f"The bundle is not a zip file Lookout can read ({exc}).") from None
    if len(archive.infolist()) > limits.entries:
        raise ArtifactBundleError(f"The bundle holds more than {limits.entries} files.")
    try:
        info = archive.getinfo(MANIFEST)
    except KeyError:
        raise ArtifactBundleError(f"The bundle has no {MANIFEST}: is it an artifact bundle from sentry-cli?") from None
    try:
        text = read_member(archive, info, min(limits.manifest_bytes, limits.total_bytes))
    except _Over:
        raise ArtifactBundleError(f"The bundle's {MANIFEST} is over {limits.manifest_bytes} bytes.") from None
    except _FileRefused as exc:
        raise ArtifactBundleError(f"The bundle's {MANIFEST} cannot be read: {exc}.") from None
    try:
        manifest = load_object(text)
    except UnreadablePayload as exc:
        raise ArtifactBundleError(f"The bundle's {MANIFEST} is not a JSON object ({exc}).") from None
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise ArtifactBundleError(f"The bundle's {MANIFEST} has no \"files\" object.")
    bundle = ArtifactBundle(archive, wanted_pairs(files), limits, read_bytes=len(text))
    if not bundle.wanted:
        raise ArtifactBundleError(
            "The bundle has no JavaScript file with a debug ID and its source map: run "
            "`sentry-cli sourcemaps inject` on the build before uploading it.")
    return bundle


def wanted_pairs(files: Mapping[str, Any]) -> list[_Wanted]:
    """The (JavaScript, map) members the manifest's `files` pair up, one per debug ID."""
    entries = [(name, entry) for name, entry in list(files.items())[:MAX_ENTRIES] if isinstance(entry, dict)]
    maps_by_id: dict[str, str] = {}
    members_by_url: dict[str, str] = {}
    for name, entry in entries:
        url = entry.get("url")
        if isinstance(url, str) and len(url) <= MAX_URL:
            members_by_url.setdefault(url, name)
        debug_id = normal_debug_id(_header(entry, "debug-id"))
        if debug_id and entry.get("type") == "source_map":
            maps_by_id.setdefault(debug_id, name)
    found: dict[str, _Wanted] = {}
    for name, entry in entries:
        debug_id = normal_debug_id(_header(entry, "debug-id"))
        url = entry.get("url")
        if entry.get("type") != "minified_source" or not debug_id or debug_id in found:
            continue
        if not isinstance(url, str) or len(url) > MAX_URL:
            continue
        map_member = maps_by_id.get(debug_id)
        named = _header(entry, "sourcemap")
        if map_member is None and isinstance(named, str) and len(named) <= MAX_URL:
            map_member = members_by_url.get(_beside(url, named))
        if map_member is not None:
            found[debug_id] = _Wanted(debug_id, url, name, map_member)
    return list(found.values())


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes:
    """A member's bytes, decompressed a step at a time and never past `cap` (`_Over`), whatever
    size its headers declare; `_FileRefused` when it cannot be decompressed."""
    if info.file_size > cap:
        raise _Over
    data = bytearray()
    try:
        with archive.open(info) as member:
            while step := member.read(READ_STEP):
                data += step
                if len(data) > cap:
                    raise _Over
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise _FileRefused(f"{info.filename[:200]} is unreadable ({str(exc)[:200]})") from None
    return bytes(data)


def count_entries(data: bytes) -> int:
    """How many members the zip's central directory can hold at most (the signatures in it), read
    from its end records alone: `zipfile` would build an object per member before anything could
    be counted."""
    start = data.rfind(b"PK\x05\x06", max(0, len(data) - _END.size - 65535))
    if start < 0 or len(data) - start < _END.size:
        raise ArtifactBundleError("The bundle is not a zip file (no end of central directory).")
    _sig, _disk, _cd_disk, _here, _total, size, _offset, _comment = _END.unpack_from(data, start)
    end = start
    if size == 0xFFFFFFFF and start >= _END64_LOCATOR.size:
        locator = _END64_LOCATOR.unpack_from(data, start - _END64_LOCATOR.size)
        end = start - _END64_LOCATOR.size - _END64.size
        if locator[0] != b"PK\x06\x07" or end < 0 or data[end:end + 4] != b"PK\x06\x06":
            raise ArtifactBundleError("The bundle is not a zip file (a broken zip64 end record).")
        size = _END64.unpack_from(data, end)[8]
    if size > end:
        raise ArtifactBundleError("The bundle is not a zip file (its central directory is cut).")
    return data.count(_CENTRAL_ENTRY, end - size, end)


def url_path(url: str) -> str:
    """A manifest URL's path: "~/assets/a.js" → "/assets/a.js", "https://cdn/x/a.js?v=1" → "/x/a.js"."""
    if url.startswith("~"):
        url = url[1:]
    path = urlsplit(url).path if "://" in url else url.split("?")[0].split("#")[0]
    return ("/" + path.lstrip("/"))[:MAX_URL]


def _beside(url: str, name: str) -> str:
    """The URL of `name` (a `sourcemap` header) relative to the file at `url`, in the manifest's
    spelling: "~/assets/a.js" and "a.js.map" give "~/assets/a.js.map"."""
    if "://" in name or name.startswith("~/"):
        return name
    if url.startswith("~"):
        origin, path = "~", url[1:]
    elif "://" in url:
        scheme, _, rest = url.partition("://")
        host, _, path = rest.partition("/")
        origin, path = f"{scheme}://{host}", "/" + path
    else:
        origin, path = "", url
    path = path.split("?")[0].split("#")[0]
    directory, slash, _file = path.rpartition("/")
    joined = name if name.startswith("/") else directory + slash + name
    parts: list[str] = []
    for part in joined.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return origin + ("/" if origin or joined.startswith("/") else "") + "/".join(parts)


def _header(entry: Mapping[str, Any], name: str) -> Any:
    headers = entry.get("headers")
    if not isinstance(headers, dict):
        return None
    return next((value for key, value in list(headers.items())[:32] if isinstance(key, str) and key.lower() == name), None)
