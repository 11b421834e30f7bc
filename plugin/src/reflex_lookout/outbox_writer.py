"""Group commit for the outbox: concurrent inserts share one transaction, on the event loop or on a
thread of its own (`OutboxWriter`), and SQLite's write-ahead log is checkpointed beside them."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sqlite3
import threading
import time
from collections import defaultdict

import anyio.to_thread
import sqlalchemy
from sqlalchemy.pool import PoolProxiedConnection as DBAPIConnection

from reflex_lookout.outbox import OutboxStore, StoreFailed

Waiter = tuple[dict[str, object], asyncio.Future[None]]
# How long a commit on the event loop may wait for another writer's lock. Other writers usually hold
# it for milliseconds; past this, the batch is committed again on a worker thread, which waits as long
# as the engine's own connections do (their busy_timeout: runtime.py `_sqlite_pragmas`), so the loop is
# never blocked and a browser, whose SDK does not send a refused envelope again, is not answered 503 for
# a lock that was about to go.
LOOP_BUSY_TIMEOUT_MS = 100
# How long the database must go without a write before `_Checkpointer` empties the WAL file (a
# TRUNCATE checkpoint), so that no byte of a delivered envelope (its row deleted and zeroed:
# `secure_delete`) is left in the WAL's older frames. 1 s: longer than the gaps inside a burst (a
# page load's envelopes, the forwarder's deletes after each delivery), so a busy outbox does not
# have its WAL cut and grown again between commits, and well under the interval of the forwarder's
# lease renewal (a write every 2-3 s, background.RENEW_S), which would otherwise keep an idle app's
# WAL from ever being emptied. A delivered envelope's bytes leave the files ~1-1.2 s after the last
# write (its row's deletion, or a lease renewal just after it).
IDLE_TRUNCATE_S = 1.0


class OutboxWriter:
    """Group commit: `await submit(row)` returns once the row is committed (or raises why not).

    Rows that arrive while a commit runs go into the next one. Where a batch is committed was
    chosen by measurement (bench/README.md):

    - on the event loop, when a commit does not wait for the disk: SQLite in WAL mode with
      synchronous=NORMAL (the default) copies a batch into the page cache in ~0.25 ms, less than
      the wake-ups a hand-over to a thread costs (intake was 1.3× higher, p99 a quarter lower);
    - on a thread of its own otherwise (synchronous=FULL fsyncs every commit; other databases
      answer over the network), which goes straight on to the next batch and wakes each batch's
      waiters with one call into their event loop.

    For SQLite, `_Checkpointer` copies the WAL into the database beside the writer.
    """

    def __init__(self, store: OutboxStore, max_batch: int = 512, on_loop: bool | None = None) -> None:
        self.store = store
        self.max_batch = max_batch
        self._sqlite = store.engine.dialect.name == "sqlite"
        self._on_loop = on_loop  # None: decided on the first submission
        self._connection: DBAPIConnection | None = None
        self._checkpoints: _Checkpointer | None = None
        self._waiting: list[Waiter] = []  # on the loop: rows for the next commit
        self._committer: asyncio.Task[None] | None = None
        self._queue: queue.SimpleQueue[Waiter | None] = queue.SimpleQueue()  # to the thread
        self._thread: threading.Thread | None = None

    async def submit(self, row: dict[str, object]) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        if self._on_loop is None:
            self._on_loop = self._commits_skip_the_disk()
        if self._on_loop:
            if self._committer is None or self._committer.done() or self._committer.get_loop() is not loop:
                self._waiting = []  # any left belong to a loop that is gone
                self._committer = loop.create_task(self._commit_on_loop(), name="lookout-outbox-writer")
            self._waiting.append((row, done))
        else:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run_thread, name="lookout-outbox-writer", daemon=True)
                self._thread.start()
            self._queue.put((row, done))
        await done

    def _commits_skip_the_disk(self) -> bool:
        """Asked before the writer opens its own connection, whose settings depend on the answer."""
        if not self._sqlite:
            return False
        with self.store.engine.connect() as connection:
            return int(connection.exec_driver_sql("PRAGMA synchronous").scalar_one()) <= 1  # OFF or NORMAL

    async def _commit_on_loop(self) -> None:
        while self._waiting:
            await asyncio.sleep(0)  # requests being read and parsed right now join this batch
            batch, self._waiting = self._waiting[: self.max_batch], self._waiting[self.max_batch :]
            error = self._commit(batch)
            if isinstance(error, StoreFailed) and _locked(error):
                error = await anyio.to_thread.run_sync(self._commit_patiently, batch)
            _resolve([done for _, done in batch], error)

    def _run_thread(self) -> None:
        while (batch := self._next_batch()) is not None:
            _settle(batch, self._commit(batch))

    def _commit(self, batch: list[Waiter]) -> Exception | None:
        """Commit `batch`; the error, if any, is every row's."""
        try:
            if self._connection is None:
                self._connection = self._connect()
            self.store.add_many([row for row, _ in batch], self._connection)
        except Exception as exc:  # noqa: BLE001 (nothing of the batch is stored: the database may be away)
            _discard(self._connection)  # a broken connection is not reused
            self._connection = None
            return exc if isinstance(exc, StoreFailed) else StoreFailed(str(exc))
        return None

    def _commit_patiently(self, batch: list[Waiter]) -> Exception | None:
        """Commit `batch` on a pooled connection, with the engine's long busy timeout (on a thread)."""
        try:
            self.store.add_many([row for row, _ in batch])
        except Exception as exc:  # noqa: BLE001 (returned to each waiter, as above)
            return exc if isinstance(exc, StoreFailed) else StoreFailed(str(exc))
        return None

    def _connect(self) -> DBAPIConnection:
        connection = self.store.engine.raw_connection()
        if self._sqlite:
            cursor = connection.cursor()
            # SQLite checkpoints the WAL in whichever connection commits past 1,000 pages (4 MB):
            # that made every ~400th batch wait 10–15 ms. `_Checkpointer` does it beside the writer.
            cursor.execute("PRAGMA wal_autocheckpoint=0")
            if self._on_loop:
                cursor.execute(f"PRAGMA busy_timeout={LOOP_BUSY_TIMEOUT_MS}")
            cursor.close()
            self.start_checkpoints()
        return connection

    def start_checkpoints(self) -> None:
        """Checkpoint the WAL from now on (SQLite; else nothing), not only from the first commit: a
        process that only delivers and deletes what an earlier one left needs it too (runtime.py)."""
        if self._sqlite and self._checkpoints is None:
            self._checkpoints = _Checkpointer(self.store.engine)

    def _next_batch(self) -> list[Waiter] | None:
        """The waiting rows (blocks for the first), or None once `close` asked the thread to stop."""
        first = self._queue.get()
        if first is None:
            return None
        batch = [first]
        while len(batch) < self.max_batch:
            try:
                waiter = self._queue.get_nowait()
            except queue.Empty:
                break
            if waiter is None:
                self._queue.put(None)  # stop after this batch
                break
            batch.append(waiter)
        return batch

    async def close(self) -> None:
        """Commit what is waiting, then let go of the connection and the checkpoints."""
        if self._committer is not None and self._committer.get_loop() is asyncio.get_running_loop():
            await self._committer
        thread = self._thread
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            await anyio.to_thread.run_sync(thread.join)
        _discard(self._connection)
        self._connection = None
        if self._checkpoints is not None:
            self._checkpoints.stop()
            self._checkpoints = None


def _locked(error: StoreFailed) -> bool:
    """Whether SQLite gave up waiting for another writer's lock ("database is locked"/"busy")."""
    return _busy(error.__cause__)


def _busy(error: BaseException | None) -> bool:
    return isinstance(error, sqlite3.OperationalError) and ("locked" in str(error) or "busy" in str(error))


def _discard(connection: DBAPIConnection | None) -> None:
    """Close a connection for good (not back to the pool: its settings are the writer's own)."""
    if connection is not None:
        with contextlib.suppress(Exception):
            connection.invalidate()


class _Checkpointer:
    """Copies the SQLite WAL into the database every `interval_s`, on a connection and thread of its
    own. A passive checkpoint never blocks the writer, which keeps appending meanwhile. Under
    non-stop writes the WAL grows (SQLite starts it over only once a checkpoint has caught up, i.e.
    when the writer pauses): `OutboxBudget` counts the WAL file, so a full disk budget pauses intake.
    (Letting the writer checkpoint at a size bound instead stalled its batches for 200–400 ms.)

    Once the database has gone `idle_s` without a write since the WAL was last emptied, a TRUNCATE
    checkpoint copies the rest and cuts the WAL file to 0 bytes, once per pause: with
    `secure_delete`, nothing of a deleted row is then left in the database, its WAL or its -shm
    (which indexes the WAL's frames, never holding their content). A write is seen whichever
    connection made it (the writer's inserts, the forwarder's deletes, a lease's renewal): SQLite's
    `data_version` on this connection changes with every commit of another. TRUNCATE takes the
    write lock and then needs every reader off the WAL; this connection waits for neither (busy
    timeout 0): SQLite answers busy at once and it is tried again at the next tick, so the writer
    is held up only while the few pages the passive checkpoints left are copied.
    """

    def __init__(self, engine: sqlalchemy.Engine, interval_s: float = 0.2, idle_s: float = IDLE_TRUNCATE_S) -> None:
        self.engine, self.interval_s, self.idle_s = engine, interval_s, idle_s
        self._errors = (sqlalchemy.exc.SQLAlchemyError, engine.dialect.loaded_dbapi.Error)
        self._version: int | None = None  # `PRAGMA data_version` as last read on this connection
        self._changed_at = 0.0  # time.monotonic() when it last changed
        self._unemptied = True  # written to since the WAL was last emptied (or not known)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lookout-wal-checkpoint", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        connection: DBAPIConnection | None = None
        try:
            while not self._stopping.wait(self.interval_s):
                try:
                    if connection is None:
                        connection = self._connect()
                    self._checkpoint(connection)
                except self._errors as exc:
                    if connection is not None and _busy(exc):
                        continue  # a moment's lock (busy timeout 0): again at the next tick
                    _close(connection)  # the database is away: a new connection at the next tick
                    connection, self._version = None, None
        finally:
            _close(connection)

    def _connect(self) -> DBAPIConnection:
        """A connection of this thread's own, for good (`data_version` is counted per connection),
        taken out of the pool so that it holds none of the pool's places."""
        connection = self.engine.raw_connection()
        connection.detach()
        cursor = connection.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout=0")  # never wait on the writer's lock or a reader
        finally:
            cursor.close()
        return connection

    def _checkpoint(self, connection: DBAPIConnection) -> None:
        cursor = connection.cursor()
        try:
            cursor.execute("PRAGMA data_version")
            version = cursor.fetchall()[0][0]
            now = time.monotonic()
            if version != self._version:  # another connection committed since the last tick
                self._version, self._changed_at, self._unemptied = version, now, True
            if self._unemptied and now - self._changed_at >= self.idle_s:
                cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                busy = cursor.fetchall()[0][0]
                self._unemptied = busy != 0  # a reader or the writer was in the way: next tick
            else:
                cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
                cursor.fetchall()
        finally:
            cursor.close()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()


def _close(connection: DBAPIConnection | None) -> None:
    if connection is not None:
        with contextlib.suppress(Exception):
            connection.close()


def _settle(batch: list[Waiter], error: Exception | None) -> None:
    """Wake each batch's waiters, from the writer thread, with one call per event loop."""
    by_loop: defaultdict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = defaultdict(list)
    for _, done in batch:
        by_loop[done.get_loop()].append(done)
    for loop, waiters in by_loop.items():
        with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting there any more
            loop.call_soon_threadsafe(_resolve, waiters, error)


def _resolve(waiters: list[asyncio.Future[None]], error: Exception | None) -> None:
    for done in waiters:
        if done.done():  # the request was cancelled (its client left)
            continue
        if error is None:
            done.set_result(None)
        else:
            done.set_exception(error)
