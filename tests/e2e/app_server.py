"""Builds and runs the real app (`reflex run --env prod`) on a free port for browser tests.

One project folder serves one test session at a time (`claim_project`): every `reflex run` rewrites
the project's `.web`, and a production run first deletes `.web/build` and then exports a build whose
websocket URL names its own port, while the app of a session already running serves those files from
disk. That session's pages then answer 404 (no link at all), or connect to the other session's backend
(refused once it stops, another database while it runs) and never fill (issue 36, item 8). A second
session of the same folder (another pytest beside this one) waits until the first one ends; the servers
of one session (tests/e2e/test_scale_out.py runs last for this reason) share the claim.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from tests.services import free_port, stop_group

ROOT = Path(__file__).resolve().parents[2]
REFLEX = ROOT / ".venv" / "bin" / "reflex"


PROJECT_WAIT_S = 1800.0  # for another session of the same project folder to end


class AppServerError(RuntimeError):
    """The app did not come up; the message carries the tail of its log."""


_claims: dict[Path, tuple[int, int]] = {}  # project folder → (its lock file's descriptor, servers of this process)


def _lock_file(root: Path) -> Path:
    """The claim's lock file: outside the project, whose git state the tests compare before and after."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"lookout-e2e-project-{digest}.lock"


def claim_project(root: Path, timeout: float = PROJECT_WAIT_S) -> None:
    """Claim the project folder `root` for this process's servers, waiting (saying so on stderr) while
    another process holds it. The claim ends with `release_project` or with the process."""
    root = root.resolve()
    if root in _claims:
        descriptor, servers = _claims[root]
        _claims[root] = descriptor, servers + 1
        return
    descriptor = os.open(_lock_file(root), os.O_RDWR | os.O_CREAT, 0o600)
    deadline, told = time.monotonic() + timeout, False
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            holder = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "?"
            if time.monotonic() > deadline:
                os.close(descriptor)
                raise AppServerError(f"{root} still serves the test session of process {holder} "
                                     f"after {timeout:.0f} s") from None
            if not told:
                print(f"waiting for the test session of process {holder} to end: it serves {root}'s build",
                      file=sys.stderr, flush=True)
                told = True
            time.sleep(0.5)
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, str(os.getpid()).encode(), 0)
    _claims[root] = descriptor, 1


def release_project(root: Path) -> None:
    root = root.resolve()
    descriptor, servers = _claims.pop(root)
    if servers > 1:
        _claims[root] = descriptor, servers - 1
    else:
        os.close(descriptor)  # and with it the lock


class AppServer:
    """One production build of the app, served on one port, with its output kept in `log_path`."""

    def __init__(self, log_path: Path, env: dict[str, str], port: int | None = None, root: Path = ROOT,
                 dev: bool = False, backend_only: bool = False) -> None:
        """`root`: the project to build and run (another copy of it, for a second build). `dev`: `reflex
        run` in dev mode instead (Vite on `port`, the backend on a port of its own). `backend_only`: the
        production backend alone on `port` (`--backend-only`: no front end is built), for tests that
        speak only to it (its websocket, its HTTP routes)."""
        self.log_path = log_path
        self.root = root
        self.dev = dev
        self.backend_only = backend_only
        self.backend_port = free_port() if dev else None
        self.tree_before: list[str] = []  # the project's git state before the build (tests/e2e/conftest.py)
        self.env = env
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._claimed = False

    def start(self, timeout: float = 900) -> None:
        claim_project(self.root)
        self._claimed = True
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        # All addresses of this machine, so that a test can also come from another machine (a network
        # namespace, tests/netns.py; the console refuses those); the other tests use 127.0.0.1.
        command = [str(REFLEX), "run", "--env", "dev" if self.dev else "prod", "--loglevel", "info",
                   "--backend-host", "0.0.0.0",
                   *(["--backend-only", "--backend-port"] if self.backend_only else ["--frontend-port"]), str(self.port)]
        if self.backend_port is not None:
            command += ["--backend-port", str(self.backend_port)]
        self._process = subprocess.Popen(
            command, cwd=self.root, env={**os.environ, **self.env}, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise AppServerError(f"the app exited with {self._process.returncode}:\n{self.log_tail()}")
            if self._answers():
                return
            time.sleep(0.5)
        raise AppServerError(f"the app did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def url_at(self, address: str) -> str:
        """The app's URL at another address of this machine (it listens on all of them), such as the
        end of a network namespace's link (tests/netns.py) that another machine's requests come to."""
        return f"http://{address}:{self.port}"

    def _answers(self) -> bool:
        try:
            # The backend's health route answers only once the lifespan start-up has run.
            if self.backend_port is None:
                return httpx.get(f"{self.url}/_health", timeout=2).status_code == 200
            return (httpx.get(f"http://127.0.0.1:{self.backend_port}/_health", timeout=2).status_code == 200
                    and httpx.get(f"{self.url}/", timeout=10).status_code == 200)
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop_group(process)
        if self._claimed:
            self._claimed = False
            release_project(self.root)

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
