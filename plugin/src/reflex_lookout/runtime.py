"""The monitoring's runtime in one backend process, built once from the settings and an outbox:

    browser SDK ──POST──▶ tunnel ──commit──▶ outbox (SQL) ──forwarder──▶ the DSN (Sentry or a Lookout)
    server SDK ──OutboxTransport──commit──▲

`Runtime` holds the tunnel (an ASGI app taking the rest of the backend inside), the outbox store
and the lifespan tasks: `run_server_sdk` (sentry-sdk into the outbox, Reflex events as transactions)
and `run_forwarder` (delivery, by one worker at a time: the lease). The plugin builds one for a host
app (backend.py); Lookout (the app this plugin comes from) builds its own with its destination: its
settings' local DSN, the projects' quotas as the tunnel's `admit`, its feeder woken by `on_commit`,
unread local rows counted by its store (`OutboxStore(also_waiting=)`). A process holds one runtime (`current()`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path

import sentry_sdk
import sqlalchemy

from reflex_lookout import server
from reflex_lookout.background import Lease, supervise
from reflex_lookout.dev_inbox import DevInbox
from reflex_lookout.forwarder import Forwarder
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol import envelope
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.settings import MonitoringSettings
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tunnel import Tunnel

logger = logging.getLogger(__name__)
_current: Runtime | None = None


def current() -> Runtime | None:
    """This process's runtime, once one was built (the plugin builds none where the app has one)."""
    return _current


class Runtime:
    def __init__(self, settings: MonitoringSettings, store: OutboxStore,
                 on_commit: Callable[[str], None] = lambda dsn: None, quiet_loggers: Sequence[str] = ()) -> None:
        """`on_commit(dsn)`: besides the forwarder, who else reads what was committed (Lookout's
        feeder); `quiet_loggers`: the host's loggers whose records must not be reported."""
        global _current
        self.settings, self.store = settings, store
        self.limits, self.stats = RateLimits(), TunnelStats()
        self.forwarder: Forwarder | None = None
        self.dev: DevInbox | None = None  # under `reflex run`: the dev overlay's copy of the server SDK's envelopes
        self.dev_relay: Callable[[bytes], None] | None = None  # ... and Spotlight's (SENTRY_SPOTLIGHT)
        self._on_commit, self._quiet = on_commit, tuple(quiet_loggers)
        self.tunnel = Tunnel(settings, store, self.limits, self.stats, on_commit=self.wake)
        if settings.scrub and settings.dsn is not None:  # Sentry mode, scrubbed before the outbox write
            from reflex_lookout.scrubbing.envelope import with_defaults

            self.tunnel.prepare = with_defaults
        _current = self

    def server_body(self, dsn: str, body: bytes) -> bytes:
        """What the server SDK's transport may write of an envelope it serialized: the tunnel's
        `prepare` applies to it too (Lookout's filters and scrubbing in local mode). `Refused` or
        `EnvelopeError` if it cannot be written."""
        if self.tunnel.prepare is None:
            return body
        return self.tunnel.prepared(dsn, envelope.parse(body, self.settings.max_envelope_bytes))

    def wake(self, dsn: str) -> None:
        """An envelope was committed: whoever takes it from the outbox can start."""
        if self.forwarder is not None:
            self.forwarder.wake(dsn)
        self._on_commit(dsn)

    @contextlib.asynccontextmanager
    async def run_server_sdk(self) -> AsyncIterator[None]:
        """Lifespan task: sentry-sdk for this process, its envelopes committed to the outbox; what is
        still queued when the process stops is committed before it exits."""
        loop = asyncio.get_running_loop()

        def committed(dsn: str) -> None:  # on the transport's thread
            with contextlib.suppress(RuntimeError):  # the loop has closed: the next start delivers it
                loop.call_soon_threadsafe(self.wake, dsn)

        transport = server.start(self.settings, self.store, on_commit=committed, quiet=self._quiet,
                                 prepare=self.server_body, dev=self.dev, dev_relay=self.dev_relay)
        try:
            yield
        finally:
            if transport is not None:
                await asyncio.to_thread(sentry_sdk.flush, 5.0)

    @contextlib.asynccontextmanager
    async def run_forwarder(self) -> AsyncIterator[None]:
        """Lifespan task: deliver the outbox while the backend runs (only when a DSN is set). The WAL's
        checkpoints start with it (outbox_writer.py), not at the tunnel's first commit: rows an earlier
        run left, delivered and deleted before anything new is written, leave the files too."""
        self.tunnel.writer.start_checkpoints()
        task = None
        if self.settings.dsn is not None:
            self.forwarder = Forwarder(self.store, self.settings, self.limits, self.stats, intake_busy=self.tunnel.busy,
                                       lease=Lease(self.store.engine, "forwarder"))
            # A scope of its own: its HTTP requests and queries must not become other events' breadcrumbs.
            with sentry_sdk.isolation_scope():
                task = supervise("lookout-forwarder", self.forwarder.run)
        try:
            yield
        finally:
            if task is not None and self.forwarder is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                await self.forwarder.aclose()
            await self.tunnel.writer.close()


def outbox_engine(url: str) -> sqlalchemy.Engine:
    """A host app's outbox database, its tables made if missing. A SQLite file gets its folder (with
    a `.gitignore` of `*`: nothing of it belongs in the app's repository) and the write-ahead log,
    so the tunnel's writes and the forwarder's reads overlap across workers.

    What it holds are envelopes as the SDKs sent them, so only this user may read it: the plugin's
    `.lookout/` folder is 0700 and the file 0600 (made before SQLite opens it; SQLite gives the
    `-wal` and `-shm` files it makes the database file's mode). Deleted rows are zeroed
    (`secure_delete`) and the writer's checkpointer empties the WAL once writes pause
    (outbox_writer.py: `_Checkpointer`), so nothing of a delivered envelope stays in any of the three."""
    engine = sqlalchemy.create_engine(url)
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        database = Path(str(engine.url.database))
        _private_folder(database.parent)
        ignore = database.parent / ".gitignore"
        if not ignore.exists():
            ignore.write_text("*\n")
        _private_file(database)
        sqlalchemy.event.listen(engine, "connect", _sqlite_pragmas)
    from reflex_lookout import tables

    tables.create(engine)
    return engine


def _private_folder(folder: Path) -> None:
    """Make the outbox's folder 0700 (this user's only); an existing one is tightened only when it
    is the plugin's own (`.lookout`), not a folder some other URL names."""
    from reflex_lookout.settings import OUTBOX_DIR

    made = not folder.is_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if made:
        os.chmod(folder, 0o700)  # whatever the umask took away from the owner
    elif folder.name == OUTBOX_DIR:
        _owner_only(folder)


def _private_file(database: Path) -> None:
    """The database file, made empty (SQLite's empty database) with mode 0600 if missing, else with
    the group's and others' permissions taken away; its `-wal` and `-shm`, if a process left them,
    too. An existing file is changed by its path, never opened: closing a descriptor of a file
    drops every SQLite lock this process holds on it (`outbox="db"`: the app's own database)."""
    try:
        fd = os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        _owner_only(database)
    else:
        try:
            os.fchmod(fd, 0o600)  # whatever the umask took away from the owner
        finally:
            os.close(fd)
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            _owner_only(database.with_name(database.name + suffix))


def _owner_only(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        os.chmod(path, mode & 0o700)


def _sqlite_pragmas(dbapi_connection: sqlalchemy.engine.interfaces.DBAPIConnection, _record: object) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA journal_size_limit=67108864")  # the WAL file shrinks back when it starts over
    # Deleted content is overwritten with zeros, not left in free space and free pages: a delivered
    # envelope's row is gone from the file once the WAL is checkpointed (as Lookout sets it for its own database).
    cursor.execute("PRAGMA secure_delete=ON")
    cursor.close()
