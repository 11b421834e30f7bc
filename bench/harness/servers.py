"""Servers on loopback: a free port, granian's command line for an app, a plain HTTP request, and
waiting until a started server answers."""

from __future__ import annotations

import contextlib
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench.harness.processes import Processes

HOST = "127.0.0.1"
GRANIAN = str(Path(sys.executable).parent / "granian")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def granian(target: str, port: int, interface: str = "asgi", workers: int = 1) -> list[str]:
    """argv serving `target` ("module:app", imported from the repository's root) on HOST:port."""
    return [
        GRANIAN, "--interface", interface, target, "--host", HOST, "--port", str(port),
        "--workers", str(workers), "--no-access-log", "--log-level", "warning",
    ]


def http(method: str, port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    """(status, body) of one request to HOST:port; an empty body for POST."""
    request = urllib.request.Request(f"http://{HOST}:{port}{path}", method=method, data=b"" if method == "POST" else None)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_ready(processes: Processes, name: str, port: int, path: str, timeout: float = 90.0) -> None:
    """Until `name` answers GET `path` with any status; raises with its log if it exits or times out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if processes.running[name].poll() is not None:
            raise RuntimeError(f"{name} exited at start:\n{processes.log_tail(name)}")
        with contextlib.suppress(OSError):
            http("GET", port, path, timeout=2.0)
            return
        time.sleep(0.1)
    raise RuntimeError(f"{name} did not answer on port {port} within {timeout:.0f} s:\n{processes.log_tail(name)}")
