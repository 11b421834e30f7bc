"""Real PostgreSQL and Redis servers for the tests, on loopback, each in a temp dir of its own.

From Debian's packages (`make test-deps` installs them): a private PostgreSQL cluster (`initdb`,
then `postgres` on a free port, run as the `postgres` user when the tests run as root, since
PostgreSQL refuses root) and `redis-server` on a free port, with nothing saved to disk. Both are
stopped when the test session ends. Without the programs, `missing()` says which are absent: in CI
that is an error, elsewhere the tests that need them skip, saying so.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
SUPERUSER = "lookout"


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian keeps them apart by version)."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(Path(p).parent.parent.name))
    return Path(found[-1]).parent if found else None


def missing() -> list[str]:
    """The servers' programs that are not installed."""
    absent = [] if postgres_bin() is not None else ["PostgreSQL (/usr/lib/postgresql/*/bin/postgres)"]
    return absent + ([] if Path(REDIS_SERVER).exists() else ["Redis (redis-server)"])


def _ephemeral_start() -> int:
    """Where the kernel's ephemeral ports begin (what a `bind` to port 0 is given)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


# A port handed to a server started later is taken BELOW the ephemeral range. One found by binding port 0
# and closing the socket can be given to another process's bind(0) before the server binds it: a CI run
# had the scaled app's readiness probe answered by a unit test's upstream recorder on the same port
# (both tests failed). Nothing binds port 0 down here, and each process draws from a block of its own
# (by pid), skipping ports in use, so two test processes do not pick the same one either. The range
# starts above the last port Chromium refuses to load from (10080, its "unsafe" list).
FIXED_PORTS = range(10_100, max(10_101, _ephemeral_start()))
PORT_BLOCK = 64
_drawn = itertools.count()


def _bindable(port: int) -> bool:
    with socket.socket() as probe:  # no SO_REUSEADDR: a listener on any address of this port refuses it
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A port no server of this machine listens on, for a server a test starts."""
    size = len(FIXED_PORTS)
    block = (os.getpid() % max(1, size // PORT_BLOCK)) * PORT_BLOCK
    for _ in range(size):
        port = FIXED_PORTS.start + (block + next(_drawn)) % size
        if _bindable(port):
            return port
    raise RuntimeError(f"no free port in {FIXED_PORTS.start}-{FIXED_PORTS.stop - 1}")


def _as_postgres() -> dict[str, object]:
    """subprocess arguments that run a PostgreSQL program as `postgres` when we are root."""
    if os.geteuid() != 0:
        return {}
    user = pwd.getpwnam("postgres")
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


def _wait(ready: callable, what: str, process: subprocess.Popen[bytes], log: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode}) at start:\n{log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(Exception):
            if ready():
                return
        time.sleep(0.1)
    raise RuntimeError(f"{what} did not start within {timeout:g} s:\n{log.read_text(errors='replace')[-2000:]}")


def read_value(database_url: str, sql: str, **params: object) -> object:
    """One value from another process's database (a running app's), with a connection of its own
    that is closed at once (None if no row)."""
    engine = sqlalchemy.create_engine(database_url, poolclass=sqlalchemy.pool.NullPool)
    try:
        with engine.connect() as connection:
            return connection.execute(sqlalchemy.text(sql), params).scalar()
    finally:
        engine.dispose()


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (a server's workers), from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rpartition(")")[2].split()[1]) == pid:  # ppid: 4th field, 2nd after the name
                found.append(int(stat.parent.name))
    return sorted(found)


def stop_group(process: subprocess.Popen[bytes], term_wait_s: float = 20.0) -> None:
    """Stop a process started in a session of its own, with its children: SIGTERM, then SIGKILL."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, term_wait_s), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


@dataclass
class Postgres:
    """A running private cluster: `url(database)` for SQLAlchemy, `restart()` for fault tests."""
    directory: Path
    port: int
    process: subprocess.Popen[bytes] | None = None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        log = self.directory / "postgres.log"
        bindir = postgres_bin()
        assert bindir is not None
        out = log.open("ab")
        self.process = subprocess.Popen(
            [str(bindir / "postgres"), "-D", str(self.directory / "data"), "-p", str(self.port),
             "-c", "listen_addresses=127.0.0.1", "-c", f"unix_socket_directories={self.directory}",
             "-c", "max_connections=300", "-c", "shared_buffers=64MB"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, **_as_postgres(),
        )
        out.close()
        engine = sqlalchemy.create_engine(self.url(), poolclass=sqlalchemy.pool.NullPool)
        try:
            _wait(lambda: engine.connect().close() is None, "PostgreSQL", self.process, log)
        finally:
            engine.dispose()

    def stop(self, fast: bool = True) -> None:
        """Shut down (fast: SIGINT, which aborts open transactions and disconnects clients)."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(2 if fast else 15)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self, down_s: float = 0.0) -> None:
        self.stop()
        time.sleep(down_s)
        self.start()


@contextlib.contextmanager
def postgres() -> Iterator[Postgres]:
    bindir = postgres_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL is not installed")
    directory = Path(tempfile.mkdtemp(prefix="lookout-pg-"))
    os.chmod(directory, 0o777)
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres", "postgres")
    subprocess.run([str(bindir / "initdb"), "-D", str(directory / "data"), "-U", SUPERUSER, "--auth=trust",
                    "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"],
                   check=True, capture_output=True, **_as_postgres())
    server = Postgres(directory, free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)


@dataclass
class Redis:
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"


@contextlib.contextmanager
def redis() -> Iterator[Redis]:
    directory = Path(tempfile.mkdtemp(prefix="lookout-redis-"))
    port = free_port()
    log = directory / "redis.log"
    out = log.open("ab")
    process = subprocess.Popen(
        [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(directory)],
        stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
    )
    out.close()

    def answers() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")

    try:
        _wait(answers, "Redis", process, log)
        yield Redis(port)
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        if process.poll() is None:
            process.kill()
        shutil.rmtree(directory, ignore_errors=True)
