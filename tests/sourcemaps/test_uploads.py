"""app/sourcemaps/uploads.py on SQLite and PostgreSQL: a bundle uploaded in chunks is assembled
into one build of the token's project (its files by debug ID, its chunks gone), the same bundle
again is `ok` at once, missing chunks are named, every refusal is a status and a sentence, the caps
hold, and concurrent assembles of one bundle write it once."""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import time

import pytest
import sqlalchemy
from sqlalchemy import func, select

from app.projects.registry import Projects
from app.settings import Settings
from app.sourcemaps import uploads
from app.sourcemaps.chunks import MAX_AGE_S, ChunkStore
from app.sourcemaps.library import MapLibrary
from app.sourcemaps.map_bounds import MAX_LINES
from app.sourcemaps.tables import BUILDS, CHUNKS, FILES
from app.sourcemaps.tokens import TokenRow, Tokens
from app.sourcemaps.uploads import Answer, UploadRefused, assemble, build_id
from plugin_support.concurrency import all_at_once
from tests.sourcemaps.artifact_zips import artifact_bundle, js_file, put_chunks, sha1
from tests.sourcemaps.big_maps import newlines_map

SETTINGS = Settings.from_env({})


@pytest.fixture
def token(engine: sqlalchemy.Engine) -> TokenRow:
    """A token for project 2, "Billing" (project 1 is the app's own)."""
    Projects(engine).local_dsn()
    project = Projects(engine).add("Billing")
    return Tokens(engine).add(project.id)[0]


def count(engine: sqlalchemy.Engine, table: sqlalchemy.Table) -> int:
    with engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(table)).scalar_one())


def refused(engine: sqlalchemy.Engine, token: TokenRow, checksum: object, chunks: object, projects: object,
            settings: Settings = SETTINGS) -> UploadRefused:
    with pytest.raises(UploadRefused) as caught:
        assemble(engine, token, checksum, chunks, projects, settings)
    return caught.value


def test_a_bundle_is_assembled_once_its_chunks_are_there_and_then_found_by_debug_id(
        engine: sqlalchemy.Engine, token: TokenRow) -> None:
    main, lazy = js_file("main.js", secrets.token_hex(1000)), js_file("lazy.js")  # not compressible: 2 chunks at least
    data = artifact_bundle(main, lazy)
    store = ChunkStore(engine)
    names = [sha1(data[i:i + 1024]) for i in range(0, len(data), 1024)]
    assert len(names) > 1
    first = assemble(engine, token, sha1(data), names, ["2"])
    assert first.state == "not_found" and first.missing == names and "not uploaded" in first.detail
    put_chunks(store, token.project_id, data)
    assert assemble(engine, token, sha1(data), names, ["Billing"]) == Answer("ok", [])
    with engine.connect() as connection:
        [build] = connection.execute(select(BUILDS)).mappings().all()
        files = connection.execute(select(FILES.c.debug_id, FILES.c.asset_path)).all()
    assert (build["build_id"], build["project_id"], build["token_id"], build["pages"]) == (
        build_id(2, sha1(data)), 2, token.id, "{}")
    assert build["bytes"] == sum(len(f.source) + len(f.sourcemap) for f in (main, lazy))
    assert sorted(files) == sorted([(main.debug_id, "/assets/main.js"), (lazy.debug_id, "/assets/lazy.js")])
    assert count(engine, CHUNKS) == 0  # used, then deleted
    found = MapLibrary(engine).by_debug_id(main.debug_id, 2)
    assert found is not None and (found.source, found.sourcemap) == (main.source, main.sourcemap)
    # The same bundle again: there already, nothing to upload.
    assert assemble(engine, token, sha1(data), names, ["2"]) == Answer("ok", [])
    assert count(engine, BUILDS) == 1


def test_the_same_bundle_from_two_projects_is_each_project_s_own(engine: sqlalchemy.Engine, token: TokenRow) -> None:
    # One build shipped by two apps: project 2 uploading it first must not make project 1's upload a no-op.
    main = js_file("main.js")
    data = artifact_bundle(main)
    other = Tokens(engine).add(1)[0]
    for uploader, project in ((token, "2"), (other, "1")):
        names = put_chunks(ChunkStore(engine), uploader.project_id, data)
        assert assemble(engine, uploader, sha1(data), names, [project]) == Answer("ok", [])
    with engine.connect() as connection:
        builds = connection.execute(select(BUILDS.c.project_id, BUILDS.c.build_id).order_by(BUILDS.c.id)).all()
    assert builds == [(2, build_id(2, sha1(data))), (1, build_id(1, sha1(data)))]
    assert build_id(1, sha1(data)) != build_id(2, sha1(data))
    for project_id in (1, 2):
        found = MapLibrary(engine).by_debug_id(main.debug_id, project_id)
        assert found is not None and found.sourcemap == main.sourcemap, project_id


def test_only_the_missing_chunks_are_named(engine: sqlalchemy.Engine, token: TokenRow) -> None:
    data = artifact_bundle(js_file("main.js"))
    chunks = [data[i:i + 512] for i in range(0, len(data), 512)]
    ChunkStore(engine).put(2, sha1(chunks[0]), chunks[0])
    ChunkStore(engine).put(3, sha1(chunks[1]), chunks[1])  # another project's copy is not this one's
    answer = assemble(engine, token, sha1(data), [sha1(c) for c in chunks], ["2"])
    assert answer.state == "not_found" and answer.missing == [sha1(c) for c in chunks[1:]]


@pytest.mark.parametrize("checksum, chunks, projects, status, words", [
    ("A" * 40, ["a" * 40], ["2"], 400, "checksum must be the bundle's SHA-1"),
    ("a" * 40, [], ["2"], 400, "chunks must be a non-empty list"),
    ("a" * 40, ["a" * 39], ["2"], 400, "chunks must be a non-empty list"),
    ("a" * 40, "a" * 40, ["2"], 400, "chunks must be a non-empty list"),
    ("a" * 40, ["a" * 40], [], 400, "projects must be a non-empty list"),
    ("a" * 40, ["a" * 40], [2], 400, "projects must be a non-empty list"),
    ("a" * 40, ["a" * 40], ["3"], 403, "This token uploads to project 2 (Billing) only, not to '3': use --project 2."),
    ("a" * 40, ["a" * 40], ["2", "web"], 403, "not to 'web'"),
    ("a" * 40, ["a" * 40], ["Lookout"], 403, "use --project 2"),
])
def test_requests_out_of_schema_or_for_another_project_are_refused(
        engine: sqlalchemy.Engine, token: TokenRow, checksum: object, chunks: object, projects: object,
        status: int, words: str) -> None:
    caught = refused(engine, token, checksum, chunks, projects)
    assert caught.status == status and words in caught.sentence


def test_chunks_that_do_not_make_the_checksum_or_no_bundle_are_an_error_with_a_sentence(
        engine: sqlalchemy.Engine, token: TokenRow) -> None:
    store = ChunkStore(engine)
    junk = b"not a zip" * 100
    names = put_chunks(store, 2, junk)
    wrong = assemble(engine, token, "b" * 40, names, ["2"])
    assert wrong == Answer("error", [], f"The chunks joined have the SHA-1 {sha1(junk)}, not the bundle's checksum {'b' * 40}.")
    answer = assemble(engine, token, sha1(junk), names, ["2"])
    assert answer.state == "error" and "not a zip file" in answer.detail
    assert count(engine, BUILDS) == 0


def test_a_bundle_over_its_cap_or_a_project_over_its_own_is_refused_with_413(
        engine: sqlalchemy.Engine, token: TokenRow) -> None:
    store = ChunkStore(engine)
    first, second = artifact_bundle(js_file("a.js", "x" * 500)), artifact_bundle(js_file("b.js", "y" * 500))
    small = dataclasses.replace(SETTINGS, upload_max_bundle_bytes=len(first) - 1)
    names = put_chunks(store, 2, first)
    caught = refused(engine, token, sha1(first), names, ["2"], small)
    assert caught.status == 413 and caught.sentence == (
        f"The bundle is {len(first)} bytes; the limit is {len(first) - 1} bytes (LOOKOUT_UPLOAD_MAX_BUNDLE_BYTES).")
    one_bundle = dataclasses.replace(SETTINGS, upload_max_project_bytes=600)  # each bundle's files: ~530 bytes
    assert assemble(engine, token, sha1(first), names, ["2"], one_bundle).state == "ok"
    more = put_chunks(store, 2, second)
    caught = refused(engine, token, sha1(second), more, ["2"], one_bundle)
    assert caught.status == 413 and "LOOKOUT_UPLOAD_MAX_PROJECT_BYTES" in caught.sentence
    assert count(engine, BUILDS) == 1 and count(engine, FILES) == 1  # nothing of the second kept
    assert store.missing(2, more) == []  # its chunks stay, for when the cap is raised
    other = Tokens(engine).add(1)[0]  # another project's uploads count against its own cap
    assert assemble(engine, other, sha1(second), put_chunks(store, 1, second), ["1"], one_bundle).state == "ok"


def test_a_map_too_costly_to_symbolicate_is_refused_at_upload_with_its_sentence(
        engine: sqlalchemy.Engine, token: TokenRow) -> None:
    """The bounds symbolication parses within (app/sourcemaps/map_bounds.py), said at upload: such a map
    could never be used."""
    store = ChunkStore(engine)
    wide, fine = js_file("wide.js", "w" * 3000), js_file("fine.js")
    small = dataclasses.replace(SETTINGS, symbolicate_max_bytes=2000)
    data = artifact_bundle(wide, fine)
    answer = assemble(engine, token, sha1(data), put_chunks(store, 2, data), ["2"], small)
    too_costly = "left out: its source map is too costly to use:"
    assert answer == Answer("ok", [], (
        f"1 files left out: ~/assets/wide.js {too_costly} it is {len(wide.source) + len(wide.sourcemap)} bytes with "
        "its file, more than the 2000 bytes of maps an event may load (LOOKOUT_SYMBOLICATE_MAX_BYTES)"))
    library = MapLibrary(engine)
    assert library.by_debug_id(fine.debug_id, 2) is not None and library.by_debug_id(wide.debug_id, 2) is None
    newlines = newlines_map("newlines.js", MAX_LINES)  # 2 MB of line breaks: "64 MiB of newlines", smaller
    alone = artifact_bundle(newlines)
    answer = assemble(engine, token, sha1(alone), put_chunks(store, 2, alone), ["2"])
    assert answer == Answer("error", [], f"No file of the bundle could be kept: ~/assets/newlines.js {too_costly} "
                                         f"it has {MAX_LINES + 1} lines, more than {MAX_LINES}.")


@pytest.mark.parametrize("workers", ["threads of one process", "processes"])
def test_the_same_bundle_assembled_at_once_by_several_requests_is_written_once(
        engine: sqlalchemy.Engine, token: TokenRow, workers: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if workers == "processes":  # no lock of this process's between them: the database's unique build ID decides
        monkeypatch.setattr(uploads, "_STRIPES", [contextlib.nullcontext()])
    data = artifact_bundle(js_file("main.js"), js_file("other.js"))
    names = put_chunks(ChunkStore(engine), 2, data)
    answers: list[Answer] = []
    failures = all_at_once(lambda: answers.append(assemble(engine, token, sha1(data), names, ["2"])))
    assert failures == [] and answers == [Answer("ok", [])] * 4
    assert count(engine, BUILDS) == 1 and count(engine, FILES) == 2


def test_an_assemble_that_finds_the_chunks_gone_because_another_process_assembled_it_answers_ok(
        engine: sqlalchemy.Engine, token: TokenRow, monkeypatch: pytest.MonkeyPatch) -> None:
    """Process B looked for the bundle just before process A committed it and dropped its chunks
    (seen once in CI): B finds the chunks gone, looks again, and answers ok, not "upload them"."""
    data = artifact_bundle(js_file("main.js"))
    names = put_chunks(ChunkStore(engine), 2, data)
    assert assemble(engine, token, sha1(data), names, ["2"]).state == "ok"  # A: stored, its chunks dropped
    real, looks = uploads._stored, []

    def before_the_commit_at_first(engine: sqlalchemy.Engine, build: str) -> bool:
        looks.append(build)
        return False if len(looks) == 1 else real(engine, build)

    monkeypatch.setattr(uploads, "_stored", before_the_commit_at_first)
    assert assemble(engine, token, sha1(data), names, ["2"]) == Answer("ok", [])
    assert len(looks) == 2 and count(engine, BUILDS) == 1


def test_assembling_drops_chunks_left_for_more_than_an_hour(engine: sqlalchemy.Engine, token: TokenRow) -> None:
    ChunkStore(engine, clock=lambda: time.time() - MAX_AGE_S - 60).put(2, sha1(b"stale"), b"stale")
    ChunkStore(engine).put(2, sha1(b"fresh"), b"fresh")
    assemble(engine, token, "c" * 40, ["c" * 40], ["2"])
    assert ChunkStore(engine).missing(2, [sha1(b"stale"), sha1(b"fresh")]) == [sha1(b"stale")]
