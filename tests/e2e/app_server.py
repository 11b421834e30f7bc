"""Builds and runs the real app (`reflex run --env prod`) on a free port for browser tests."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx

from tests.services import free_port, stop_group

ROOT = Path(__file__).resolve().parents[2]
REFLEX = ROOT / ".venv" / "bin" / "reflex"


class AppServerError(RuntimeError):
    """The app did not come up; the message carries the tail of its log."""


class AppServer:
    """One production build of the app, served on one port, with its output kept in `log_path`."""

    def __init__(self, log_path: Path, env: dict[str, str], port: int | None = None) -> None:
        self.log_path = log_path
        self.env = env
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 900) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("wb")
        # All addresses of this machine, so that a test can also come from a non-loopback one
        # (the console refuses those); the tests themselves use 127.0.0.1.
        command = [str(REFLEX), "run", "--env", "prod", "--loglevel", "info",
                   "--frontend-port", str(self.port), "--backend-host", "0.0.0.0"]
        self._process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **self.env}, stdin=subprocess.DEVNULL,
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
        self.stop()
        raise AppServerError(f"the app did not answer within {timeout:.0f} s:\n{self.log_tail()}")

    def url_from_elsewhere(self) -> str | None:
        """The app's URL through this machine's first non-loopback address (None if it has none)."""
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("198.51.100.1", 9))  # a documentation address; no packet is sent, only a route picked
            address = probe.getsockname()[0]
            if not ipaddress.ip_address(address).is_loopback:
                return f"http://{address}:{self.port}"
        return None

    def _answers(self) -> bool:
        try:
            # The backend's health route answers only once the lifespan start-up has run.
            return httpx.get(f"{self.url}/_health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop_group(process)

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
