"""Where a server's CPU goes, by stage of the ingest pipeline: py-spy (bench/requirements.txt) samples
a server's process and its workers (`--subprocesses`, RATE_HZ samples a second, `--nonblocking`: the processes are not
paused to be read) while a measurement runs; each sampled stack is put in the stage of the deepest
frame of the app that names one (STAGES), so that a library's time counts for the app's code that
called it (a SQL statement of the event writer is the writer's). py-spy samples the threads that
are not idle: running, or ready to run (on a busy machine, waiting for a core too); a thread in
native code only (granian's, or Python's between frames) has no Python frame and counts as OTHER."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from bench.harness.processes import Processes

PY_SPY = Path(sys.executable).parent / "py-spy"
RATE_HZ = 25  # at 100 Hz py-spy took ~35 % of a core from the servers it watched
OTHER = "other: event loop, hand-offs, native, GC"
# (stage, a path fragment of the file, the function or "" for any), tried from the stack's root to its
# leaf: the last one that matches wins.
STAGES: list[tuple[str, str, str]] = [
    ("accept: HTTP, intake, outbox commit", "reflex_lookout/protocol/asgi.py", ""),
    ("accept: HTTP, intake, outbox commit", "reflex_lookout/intake.py", ""),
    ("accept: HTTP, intake, outbox commit", "reflex_lookout/tunnel.py", ""),
    ("accept: HTTP, intake, outbox commit", "reflex_lookout/outbox.py", ""),
    ("accept: HTTP, intake, outbox commit", "reflex_lookout/outbox_writer.py", ""),
    ("accept: HTTP, intake, outbox commit", "app/ingest/endpoints.py", ""),
    ("accept: HTTP, intake, outbox commit", "app/protocol/auth.py", ""),
    ("accept: quotas", "app/ingest/quotas.py", ""),
    ("before the write: inbound filters, PII scrubbing", "app/ingest/before_write.py", ""),
    ("before the write: inbound filters, PII scrubbing", "app/ingest/inbound_filters.py", ""),
    ("before the write: inbound filters, PII scrubbing", "reflex_lookout/scrubbing/", ""),
    ("feeder: read rows, decode, parse", "app/ingest/feeder.py", ""),
    ("grouping and writes", "app/ingest/store.py", "ingest_batch"),
    ("feeder: read rows, decode, parse", "app/ingest/envelope_reader.py", ""),
    ("grouping and writes", "app/ingest/envelope_writer.py", ""),
    ("grouping and writes", "app/ingest/event_writer.py", ""),
    ("grouping and writes", "app/inbox/grouping.py", ""),
    ("grouping and writes", "app/ingest/trace_writer.py", ""),
    ("grouping and writes", "app/ingest/log_writer.py", ""),
    ("symbolication", "app/sourcemaps/", ""),
    ("User-Agent parsing", "app/ingest/user_agent.py", ""),
    ("tag index: derive, queue, count", "app/inbox/tag_index.py", ""),
    ("tag index: derive, queue, count", "app/ingest/tag_counter.py", ""),
    ("background: retention, leases, alerts", "app/inbox/retention.py", ""),
    ("background: retention, leases, alerts", "app/inbox/budget.py", ""),
    ("background: retention, leases, alerts", "reflex_lookout/background.py", ""),
    ("background: retention, leases, alerts", "app/alerts/", ""),
    ("background: retention, leases, alerts", "app/ingest/tag_backfill.py", ""),
]
ORDER = list(dict.fromkeys([stage for stage, _, _ in STAGES] + [OTHER]))


def stage_of(stack: str) -> str:
    """The stage of one collapsed stack ("function (file:line);..." from the root)."""
    found = OTHER
    for frame in stack.split(";"):
        function, _, where = frame.rpartition(" (")
        for stage, fragment, name in STAGES:
            if fragment in where and (not name or function == name or function.endswith("." + name)):
                found = stage
    return found


class Profile:
    """py-spy recording one started server (`name` in `processes`) until `stop`."""

    def __init__(self, processes: Processes, workdir: Path, name: str) -> None:
        self.processes, self.server = processes, name
        self.key = f"py-spy-{name}"
        self.output = workdir / f"{self.key}.txt"

    @staticmethod
    def available() -> bool:
        return PY_SPY.exists()

    def start(self) -> None:
        self.output.unlink(missing_ok=True)
        pid = self.processes.running[self.server].pid
        self.processes.start(self.key, [str(PY_SPY), "record", "--pid", str(pid), "--subprocesses", "--format", "raw",
                                        "--rate", str(RATE_HZ), "--nonblocking", "--output", str(self.output)])

    def cpu_seconds(self) -> float:
        """What py-spy itself has used so far."""
        return self.processes.cpu_seconds(self.key)

    def stop(self, keep: Path | None = None) -> dict[str, int]:
        """Stop recording (SIGINT: py-spy writes what it sampled); samples per stage, in ORDER. `keep`:
        where to copy py-spy's collapsed stacks (for flamegraph.pl or speedscope)."""
        process = self.processes.running[self.key]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(30)
        self.processes.stop(self.key)
        samples: dict[str, int] = dict.fromkeys(ORDER, 0)
        if not self.output.exists():
            raise RuntimeError(f"py-spy wrote nothing:\n{self.processes.log_tail(self.key)}")
        if keep is not None:
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(self.output, keep)
        for line in self.output.read_text(errors="replace").splitlines():
            stack, _, count = line.rpartition(" ")
            if stack and count.isdigit():
                samples[stage_of(stack)] += int(count)
        return samples
