"""app/sourcemaps/chunks.py on SQLite and PostgreSQL: chunks kept per project, named by SHA-1,
read back joined in order, deleted, and dropped when never assembled within an hour."""

from __future__ import annotations

import pytest
import sqlalchemy

from app.sourcemaps.chunks import MAX_AGE_S, ChunkStore
from tests.sourcemaps.artifact_zips import sha1

A, B, C = b"first chunk", b"second chunk", b"third chunk"


def test_chunks_are_kept_per_project_and_read_back_joined_in_the_order_named(engine: sqlalchemy.Engine) -> None:
    store = ChunkStore(engine)
    assert store.missing(2, [sha1(A), sha1(B), sha1(A)]) == [sha1(A), sha1(B)]  # in order, each once
    store.put(2, sha1(A), A)
    store.put(2, sha1(B), B)
    store.put(2, sha1(A), A)  # again: kept already is fine
    assert store.missing(2, [sha1(A), sha1(C), sha1(B)]) == [sha1(C)]
    assert store.missing(3, [sha1(A)]) == [sha1(A)]  # another project's chunk is not this one's
    assert store.read(2, [sha1(B), sha1(A), sha1(B)]) == B + A + B
    assert store.sizes(2, [sha1(A), sha1(C)]) == {sha1(A): len(A)}
    assert store.pending_bytes(2) == len(A) + len(B) and store.pending_bytes(3) == 0
    with pytest.raises(KeyError) as absent:
        store.read(3, [sha1(A)])
    assert absent.value.args == (sha1(A),)


def test_deleted_chunks_go_for_their_project_only(engine: sqlalchemy.Engine) -> None:
    store = ChunkStore(engine)
    for project in (2, 3):
        store.put(project, sha1(A), A)
        store.put(project, sha1(B), B)
    with engine.begin() as connection:  # in a transaction of the caller's
        store.delete(2, [sha1(A)], connection)
    assert store.missing(2, [sha1(A), sha1(B)]) == [sha1(A)]
    store.delete(2, [sha1(B)])
    assert store.pending_bytes(2) == 0 and store.pending_bytes(3) == len(A) + len(B)


def test_chunks_never_assembled_are_dropped_after_an_hour(engine: sqlalchemy.Engine) -> None:
    now = [10_000.0]
    store = ChunkStore(engine, lambda: now[0])
    store.put(2, sha1(A), A)
    now[0] += MAX_AGE_S / 2
    store.put(3, sha1(B), B)
    assert store.collect_garbage() == 0
    now[0] += MAX_AGE_S / 2 + 1
    assert store.collect_garbage() == 1
    assert store.missing(2, [sha1(A)]) == [sha1(A)] and store.missing(3, [sha1(B)]) == []
