"""app/sourcemaps/artifact_bundle.py over real zips (made with zipfile in both CLIs' layouts): pairs
found by debug ID or by the `sourcemap` header, files without a pair left out, and the caps —
a zip bomb, a member whose header lies about its size, too many entries, too much in all."""

from __future__ import annotations

import io
import json
import struct
import zipfile

import pytest

from app.sourcemaps.artifact_bundle import (
    MAX_ENTRIES,
    MAX_FILE_BYTES,
    ArtifactBundleError,
    Limits,
    count_entries,
    open_bundle,
    url_path,
)
from tests.sourcemaps.artifact_zips import JsFile, artifact_bundle, js_file, member

MIB = 1024 * 1024


def pairs(data: bytes, limits: Limits | None = None) -> list[tuple[str, str, bytes, bytes]]:
    return [(p.debug_id, p.url, p.source, p.sourcemap) for p in open_bundle(data, limits).pairs()]


def refusal(data: bytes, limits: Limits | None = None) -> str:
    with pytest.raises(ArtifactBundleError) as caught:
        list(open_bundle(data, limits).pairs())
    return caught.value.sentence


def test_sentry_clis_bundle_gives_each_file_with_its_map_by_debug_id() -> None:
    main, lazy = js_file("main.js"), js_file("lazy-X1.js")
    found = open_bundle(artifact_bundle(main, lazy))
    assert [(p.debug_id, p.url, p.asset_path, p.source, p.sourcemap) for p in found.pairs()] == [
        (main.debug_id, "~/assets/main.js", "/assets/main.js", main.source, main.sourcemap),
        (lazy.debug_id, "~/assets/lazy-X1.js", "/assets/lazy-X1.js", lazy.source, lazy.sourcemap),
    ]
    assert found.refused == []


def test_the_new_clis_bundle_pairs_by_its_capitalised_sourcemap_header() -> None:
    main = js_file("main.js")
    # Its members have no files/ prefix, its maps no debug ID; entries are stored, not deflated.
    assert pairs(artifact_bundle(main, new_cli=True, compression=zipfile.ZIP_STORED)) == [
        (main.debug_id, main.url, main.source, main.sourcemap)]


def test_debug_ids_are_normalised_and_one_pair_is_kept_per_debug_id() -> None:
    spelled = JsFile("https://cdn.example.com/static/app.js?v=3", b"js", b"{}", "9F93D71EDD3A5DC7915AA15BB6B578DF")
    again = JsFile("https://cdn.example.com/static/other.js", b"other", b"{}", spelled.debug_id)
    assert pairs(artifact_bundle(spelled, again)) == [
        ("9f93d71e-dd3a-5dc7-915a-a15bb6b578df", spelled.url, b"js", b"{}")]
    assert url_path(spelled.url) == "/static/app.js"


def test_files_without_a_debug_id_or_a_map_are_left_out_and_none_at_all_is_a_sentence() -> None:
    kept = js_file("kept.js")
    manifest = {"files": {
        member(kept.url, False): {"type": "minified_source", "url": kept.url,
                                  "headers": {"debug-id": kept.debug_id, "sourcemap": "kept.js.map"}},
        member(kept.url + ".map", False): {"type": "source_map", "url": kept.url + ".map", "headers": {}},
        "files/_/_/assets/no-id.js": {"type": "minified_source", "url": "~/assets/no-id.js",
                                      "headers": {"sourcemap": "no-id.js.map"}},
        "files/_/_/assets/no-map.js": {"type": "minified_source", "url": "~/assets/no-map.js",
                                       "headers": {"debug-id": "11111111-2222-3333-4444-555555555555"}},
        "files/_/_/assets/weird.js": "not an entry",
    }}
    members = {member(kept.url, False): kept.source, member(kept.url + ".map", False): kept.sourcemap,
               "files/_/_/assets/no-id.js": b"x", "files/_/_/assets/no-map.js": b"y"}
    assert pairs(artifact_bundle(manifest=manifest, extra=members)) == [
        (kept.debug_id, kept.url, kept.source, kept.sourcemap)]  # paired by its header: its map has no ID
    assert "sentry-cli sourcemaps inject" in refusal(artifact_bundle(manifest={"files": {}}))


def test_a_member_the_manifest_names_but_the_zip_lacks_is_that_pairs_problem() -> None:
    kept, lost = js_file("kept.js"), js_file("lost.js")
    data = artifact_bundle(kept, lost)
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("manifest.json"))
    rebuilt = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(rebuilt, "w") as archive:
        for name in source.namelist():
            if name != member(lost.url + ".map", False):
                archive.writestr(name, source.read(name))
    bundle = open_bundle(rebuilt.getvalue())
    assert [p.url for p in bundle.pairs()] == [kept.url]
    assert bundle.refused == [f"{lost.url} left out: the manifest names "
                              f"{member(lost.url + '.map', False)!r}, which the zip does not hold"]
    assert len(manifest["files"]) == 4


@pytest.mark.parametrize("data, words", [
    (b"not a zip at all", "not a zip file"),
    (artifact_bundle(manifest=None, extra={}).replace(b"manifest.json", b"manifest.jsox"), "has no manifest.json"),
    (artifact_bundle(manifest={"files": []}), 'no "files" object'),
])
def test_a_bundle_that_is_no_artifact_bundle_is_refused_with_a_sentence(data: bytes, words: str) -> None:
    assert words in refusal(data)


def test_a_manifest_that_is_not_json_is_refused() -> None:
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w") as archive:
        archive.writestr("manifest.json", b"{not json")
    assert "not a JSON object" in refusal(output.getvalue())


def test_a_zip_bomb_is_left_out_without_being_inflated_past_the_cap() -> None:
    kept, bomb = js_file("kept.js"), JsFile("~/assets/bomb.js", b"\0" * (MAX_FILE_BYTES + 1), b"{}")
    data = artifact_bundle(kept, bomb)
    assert len(data) < MAX_FILE_BYTES // 500  # 64 MiB of zeros deflate to a few hundred KiB
    bundle = open_bundle(data)
    assert [p.url for p in bundle.pairs()] == [kept.url]
    assert bundle.refused == [f"{bomb.url} left out: files/_/_/assets/bomb.js is over {MAX_FILE_BYTES} bytes decompressed"]


def declare_size(data: bytearray, name: bytes, size: int) -> None:
    """Make `name`'s local header and central directory entry declare `size` bytes uncompressed."""
    for signature, name_at, size_at in ((b"PK\x03\x04", 30, 22), (b"PK\x01\x02", 46, 24)):
        at = data.find(signature)
        while at >= 0:
            if data[at + name_at:at + name_at + len(name)] == name:
                struct.pack_into("<L", data, at + size_at, size)
            at = data.find(signature, at + 4)


def test_a_member_whose_header_understates_its_size_is_read_no_further_than_its_cap() -> None:
    liar = JsFile("~/assets/liar.js", b"a" * 4096, b"{}")
    data = bytearray(artifact_bundle(liar))
    declare_size(data, member(liar.url, False).encode(), 16)  # it inflates to 4,096
    bundle = open_bundle(bytes(data), Limits(file_bytes=1024))
    assert list(bundle.pairs()) == []
    assert "is unreadable" in bundle.refused[0]  # zipfile stops at the declared size; the CRC tells


def test_all_files_together_are_capped() -> None:
    files = [JsFile(f"~/assets/{n}.js", bytes([n]) * MIB, b"{}") for n in range(4)]
    assert "more than 3145728 bytes decompressed" in refusal(artifact_bundle(*files), Limits(total_bytes=3 * MIB))
    assert len(pairs(artifact_bundle(*files), Limits(total_bytes=5 * MIB))) == 4


def test_too_many_entries_are_refused_before_the_zip_is_opened() -> None:
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("manifest.json", "{}")
        for n in range(MAX_ENTRIES):
            archive.writestr(f"files/_/_/{n}.js", b"")
    data = output.getvalue()
    assert count_entries(data) == MAX_ENTRIES + 1
    assert refusal(data) == f"The bundle holds {MAX_ENTRIES + 1} files; at most {MAX_ENTRIES} are read."


def test_a_big_manifest_is_refused() -> None:
    manifest = {"files": {}, "note": "x" * (2 * MIB)}
    assert "manifest.json is over 1048576 bytes" in refusal(artifact_bundle(manifest=manifest), Limits(manifest_bytes=MIB))
