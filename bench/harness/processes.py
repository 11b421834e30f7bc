"""The processes a benchmark starts: each in a session (process group) of its own, logged to a file,
stopped with its whole group, and timed in CPU seconds; and the temporary workspace that stops them
all at the end, even on SIGTERM."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository: every process starts here
CLK_TCK = os.sysconf("SC_CLK_TCK")


class Processes:
    """Every process the benchmark starts, each in a session (process group) of its own."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.running: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"{name}.log").open("ab")
        process = subprocess.Popen(
            argv, cwd=ROOT, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        log.close()
        self.running[name] = process
        return process

    def stop(self, name: str) -> None:
        process = self.running.pop(name, None)
        if process is None:
            return
        for sig, wait_s in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, sig)
            try:
                process.wait(wait_s)
                break
            except subprocess.TimeoutExpired:
                continue
        # Workers of the group may outlive their parent for a moment: make sure none is left.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)

    def stop_all(self) -> None:
        for name in list(self.running):
            self.stop(name)

    def log_tail(self, name: str, lines: int = 15) -> str:
        path = self.log_dir / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def cpu_seconds(self, name: str) -> float:
        """User + system CPU of every live process in `name`'s process group."""
        process = self.running[name]
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                fields = stat.read_text().rpartition(")")[2].split()
                if int(fields[2]) == process.pid:  # pgrp (field 5 of stat; index 2 after the name)
                    total += int(fields[11]) + int(fields[12])  # utime, stime
        return total / CLK_TCK


@contextlib.contextmanager
def workspace() -> Iterator[tuple[Path, Processes]]:
    """A temporary directory and the processes started in it; both gone on leaving."""
    workdir = Path(tempfile.mkdtemp(prefix="lookout-bench-"))
    processes = Processes(workdir)
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so `finally` runs on SIGTERM too
    try:
        yield workdir, processes
    finally:
        processes.stop_all()
        signal.signal(signal.SIGTERM, previous)
        shutil.rmtree(workdir, ignore_errors=True)
