"""Nothing readable of a delivered envelope stays in the outbox's files (issue 35): the plugin's
runtime on a real SQLite outbox (`outbox_engine`), its tunnel taking an envelope over ASGI and its
forwarder delivering it to a real upstream on 127.0.0.1 (plugin/tests/plugin_support/upstream.py).

The files are read as the running code leaves them: nothing here checkpoints, vacuums or flushes."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy

from plugin_support.upstream import Upstream
from reflex_lookout import runtime
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.outbox_writer import OutboxWriter
from reflex_lookout.settings import MonitoringSettings

pytestmark = pytest.mark.anyio
FILES = ("outbox.db", "outbox.db-wal", "outbox.db-shm")
# The idle checkpoint comes ~1-1.2 s after the last write (outbox_writer.IDLE_TRUNCATE_S), up to ~2 s
# later when the forwarder's lease renewal (a write) falls just before it: room for a loaded machine.
CLEAN_WITHIN_S = 6.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # as Reflex's backend runs


@pytest.fixture(autouse=True)
def usual_umask(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The common umask (022), which alone would make files 0644 and folders 0755; no runtime of an
    earlier test as this process's."""
    monkeypatch.setattr(runtime, "_current", None)
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with Upstream() as server:
        yield server


def settings_for(upstream: Upstream, **changes: Any) -> MonitoringSettings:
    dsn = Dsn.parse(f"http://public@127.0.0.1:{upstream.port}/42")
    return MonitoringSettings(dsn=dsn, server=False, forward_timeout_s=2.0, retry_base_s=0.05, retry_max_s=0.2,
                              **changes)


def envelope(dsn: Dsn, event: dict[str, object]) -> bytes:
    event_id = uuid.uuid4().hex
    return b"\n".join([json.dumps({"event_id": event_id, "dsn": str(dsn)}).encode(),
                       json.dumps({"type": "event"}).encode(), json.dumps({"event_id": event_id, **event}).encode()])


def files_holding(folder: Path, marker: str) -> list[str]:
    """Which of outbox.db, its -wal and its -shm hold `marker` in any byte (a missing file holds none)."""
    holding = []
    for name in FILES:
        try:
            data = (folder / name).read_bytes()
        except FileNotFoundError:
            continue
        if marker.encode() in data:
            holding.append(name)
    return holding


async def until(condition: Callable[[], object], timeout: float, what: str | Callable[[], str]) -> None:
    """Poll `condition` every 0.05 s, without blocking the loop the forwarder runs on; `what` (or
    what it returns, at the deadline) says what did not happen."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what() if callable(what) else what}: not within {timeout:g} s")
        await asyncio.sleep(0.05)


@asynccontextmanager
async def running(settings: MonitoringSettings, folder: Path) -> AsyncIterator[tuple[runtime.Runtime, httpx.AsyncClient]]:
    """The plugin's runtime on `folder/outbox.db` with its forwarder running, and a client of its tunnel."""
    engine = runtime.outbox_engine(f"sqlite:///{folder / 'outbox.db'}")
    built = runtime.Runtime(settings, OutboxStore(engine))
    try:
        async with built.run_forwarder(), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=built.tunnel.asgi()), base_url="http://app.test"
        ) as client:
            yield built, client
    finally:
        engine.dispose()


async def test_the_files_are_this_users_only_and_a_delivered_envelope_leaves_no_byte_in_them(
    tmp_path: Path, upstream: Upstream
) -> None:
    folder, marker = tmp_path / ".lookout", f"outbox-marker-{uuid.uuid4().hex}"
    settings = settings_for(upstream)
    async with running(settings, folder) as (_, client):
        answer = await client.post(settings.tunnel_path, content=envelope(settings.reporting_dsn, {"message": marker}))
        assert answer.status_code == 200, answer.text
        # As committed: the row, in the WAL at least until the WAL is emptied (1 s without a write).
        assert files_holding(folder, marker) != []
        modes = {name: stat.S_IMODE((folder / name).stat().st_mode) for name in FILES}
        assert modes == dict.fromkeys(FILES, 0o600)
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700

        await until(lambda: upstream.accepted, 10, "the upstream received the envelope")
        [delivered] = upstream.accepted
        assert marker.encode() in delivered.body
        # Delivered, its row deleted (zeroed: secure_delete), then the WAL emptied once writes paused.
        # Both looked for at once: the marker can leave the WAL before the WAL is cut (a later write
        # overwrites its frame), and the forwarder's lease renewals write again every 2-3 s, so an
        # emptied WAL is a moment, not a state (seen: marker gone, WAL 37,112 bytes, a renewal's).
        await until(lambda: not files_holding(folder, marker) and (folder / "outbox.db-wal").stat().st_size == 0,
                    CLEAN_WITHIN_S, lambda: f"the delivered envelope's marker left {files_holding(folder, marker)}, "
                    f"the WAL {(folder / 'outbox.db-wal').stat().st_size} bytes")


async def test_a_scrubbed_envelope_reaches_the_upstream_filtered_and_its_secret_never_reaches_a_file(
    tmp_path: Path, upstream: Upstream
) -> None:
    pytest.importorskip("sentry_relay", reason="Monitoring(scrub=True) needs the extra reflex-lookout[scrub]")
    folder = tmp_path / ".lookout"
    secret, kept = f"hunter2-{uuid.uuid4().hex}", f"kept-{uuid.uuid4().hex}"
    settings = settings_for(upstream, scrub=True)
    seen: dict[str, set[str]] = {secret: set(), kept: set()}
    reads = 0
    stop = threading.Event()

    def watch() -> None:  # from before the post until after the delivery, as often as it can
        nonlocal reads
        while not stop.is_set():
            for marker, names in seen.items():
                names.update(files_holding(folder, marker))
            reads += 1
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, name="outbox-files-watch", daemon=True)
    async with running(settings, folder) as (built, client):
        assert built.tunnel.prepare is not None  # Sentry mode with scrub: Relay's defaults before the write
        watcher.start()
        try:
            event = {"message": kept, "request": {"url": "http://app.test/login", "data": {"password": secret}}}
            answer = await client.post(settings.tunnel_path, content=envelope(settings.reporting_dsn, event))
            assert answer.status_code == 200, answer.text
            await until(lambda: upstream.accepted, 10, "the upstream received the envelope")
            await until(lambda: not files_holding(folder, kept), CLEAN_WITHIN_S, "the delivered envelope left the files")
        finally:
            stop.set()
            watcher.join()

    assert seen[secret] == set(), f"the scrubbed secret was written to {sorted(seen[secret])}"
    # The watch did see what was written (the envelope's unscrubbed message), so it would have seen the secret.
    assert seen[kept] and reads > 10
    [delivered] = upstream.accepted
    payload = json.loads(delivered.body.split(b"\n")[2])
    assert payload["request"]["data"] == {"password": "[Filtered]"} and payload["message"] == kept
    assert secret.encode() not in delivered.body


def test_the_wal_is_emptied_once_when_writes_pause_not_again_while_idle(tmp_path: Path) -> None:
    """The writer alone (no forwarder, whose lease renewals are writes): after one row, the WAL file
    is cut to 0 bytes, and left alone while nothing is written."""
    engine = runtime.outbox_engine(f"sqlite:///{tmp_path / 'outbox.db'}")
    writer = OutboxWriter(OutboxStore(engine))
    wal = tmp_path / "outbox.db-wal"
    row = {"dsn": "d1", "status": "pending", "received_at": 0.0, "categories": "error", "size": 3, "body": b"row"}

    async def main() -> tuple[int, int]:
        await writer.submit(row)
        written = wal.stat()
        assert written.st_size > 0

        def emptied() -> bool:
            # A TRUNCATE checkpoint cuts the file and gives it a new mtime, each time. The kernel sets
            # the two one after the other, and stat() can fall between them (seen under load: size 0
            # with the last write's mtime, the new one 4 ms later): wait for both.
            now = wal.stat()
            return now.st_size == 0 and now.st_mtime_ns != written.st_mtime_ns

        await until(emptied, CLEAN_WITHIN_S, "the WAL was emptied")
        emptied_at = wal.stat().st_mtime_ns
        await asyncio.sleep(1.5)  # longer than the idle period, seven checkpointer ticks
        again = wal.stat().st_mtime_ns
        await writer.close()
        return emptied_at, again

    try:
        emptied_at, again = asyncio.run(main())
        with engine.connect() as connection:  # the row is there, in the database file
            assert connection.execute(sqlalchemy.text("select body from outbox")).scalars().all() == [b"row"]
    finally:
        engine.dispose()
    assert again == emptied_at


def test_an_outbox_made_before_with_the_umasks_modes_is_made_this_users_only(tmp_path: Path) -> None:
    folder = tmp_path / ".lookout"
    folder.mkdir()  # 0755 and 0644: as an earlier version of the plugin left them
    with sqlite3.connect(folder / "outbox.db") as made:
        made.execute("create table earlier (x)")
    made.close()
    assert stat.S_IMODE((folder / "outbox.db").stat().st_mode) == 0o644

    engine = runtime.outbox_engine(f"sqlite:///{folder / 'outbox.db'}")
    try:
        with engine.begin() as connection:  # a write: the -wal and -shm files are made
            connection.execute(sqlalchemy.text("insert into earlier values (1)"))
            modes = {name: stat.S_IMODE((folder / name).stat().st_mode) for name in FILES}
            assert connection.exec_driver_sql("PRAGMA secure_delete").scalar() == 1
    finally:
        engine.dispose()
    assert modes == dict.fromkeys(FILES, 0o600)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
