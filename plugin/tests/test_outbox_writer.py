"""The group-commit writer of the outbox, on a real SQLite file (and PostgreSQL)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import sqlalchemy

from plugin_support.helpers import row
from reflex_lookout import runtime
from reflex_lookout.outbox import OutboxStore, StoreFailed
from reflex_lookout.outbox_writer import OutboxWriter


@pytest.fixture(params=[True, False], ids=["commits-on-the-loop", "commits-on-a-thread"])
def on_loop(request: pytest.FixtureRequest) -> bool:
    return request.param


def test_concurrent_submissions_share_commits(engine: sqlalchemy.Engine, on_loop: bool) -> None:
    store = OutboxStore(engine)
    batches: list[int] = []
    add_many = store.add_many
    store.add_many = lambda rows, connection=None: (batches.append(len(rows)), add_many(rows, connection))[1]  # type: ignore[method-assign]  # counts each batch
    writer = OutboxWriter(store, on_loop=on_loop)

    async def main() -> None:
        await asyncio.gather(*(writer.submit(row(body=bytes([i]))) for i in range(100)))
        await writer.close()

    asyncio.run(main())
    assert sum(batches) == 100 and len(batches) < 100
    assert len(store.next_rows("d1", 200)) == 100


def test_writer_works_again_on_a_new_event_loop(engine: sqlalchemy.Engine, on_loop: bool) -> None:
    store = OutboxStore(engine)
    writer = OutboxWriter(store, on_loop=on_loop)
    asyncio.run(writer.submit(row(body=b"first loop")))
    asyncio.run(writer.submit(row(body=b"second loop")))
    assert [r.body for r in store.next_rows("d1", 10)] == [b"first loop", b"second loop"]


def test_a_failed_commit_reaches_every_waiter(engine: sqlalchemy.Engine, on_loop: bool) -> None:
    store = OutboxStore(engine)
    writer = OutboxWriter(store, on_loop=on_loop)

    async def main() -> list[object]:
        return await asyncio.gather(
            writer.submit(row()), writer.submit({**row(), "body": None}), return_exceptions=True  # NOT NULL
        )

    results = asyncio.run(main())
    assert all(isinstance(r, StoreFailed) for r in results)
    assert store.total_bytes() == 0  # the batch is all or nothing
    asyncio.run(writer.submit(row(body=b"after the failure")))  # on a fresh connection
    assert [r.body for r in store.next_rows("d1", 10)] == [b"after the failure"]


def test_a_closed_writer_starts_again_on_the_next_submission(engine: sqlalchemy.Engine, on_loop: bool) -> None:
    store = OutboxStore(engine)
    writer = OutboxWriter(store, on_loop=on_loop)

    async def main() -> None:
        await writer.submit(row(body=b"before"))
        await writer.close()
        await writer.close()  # twice is harmless
        await writer.submit(row(body=b"after"))
        await writer.close()

    asyncio.run(main())
    assert [r.body for r in store.next_rows("d1", 10)] == [b"before", b"after"]


def test_a_commit_on_the_loop_that_meets_a_longer_lock_waits_for_it_on_a_thread(tmp_path: Path) -> None:
    """Another writer holds SQLite's lock for 0.6 s, six times the loop's wait: the row is still
    stored (a browser's SDK does not send a refused envelope again), and the loop runs meanwhile."""
    engine = runtime.outbox_engine(f"sqlite:///{tmp_path / 'locked'}.db")
    store = OutboxStore(engine)
    writer = OutboxWriter(store)
    holder = engine.raw_connection()
    holder.cursor().execute("BEGIN IMMEDIATE")  # the write lock, until the commit below

    async def main() -> int:
        ticks, at_release = 0, [-1]

        def release() -> None:  # on the loop: it runs at 0.6 s only if the loop is free by then
            at_release[0] = ticks
            holder.commit()

        submitted = asyncio.ensure_future(writer.submit(row(body=b"while locked")))
        loop = asyncio.get_running_loop()
        loop.call_later(0.6, release)
        while not submitted.done():
            await asyncio.sleep(0.01)
            ticks += 1
        await submitted  # raises StoreFailed if the lock cost the row
        await writer.close()
        return at_release[0]

    ticks_while_locked = asyncio.run(main())
    holder.close()
    assert writer._on_loop is True
    assert [r.body for r in store.next_rows("d1", 10)] == [b"while locked"]
    # The loop went on while the thread waited for the lock: it ticked before the lock was released
    # (about 50 times on a quiet machine, 17 once beside the other test processes). A loop blocked
    # on the lock could not tick, nor run the release, until the lock went.
    assert ticks_while_locked >= 3
