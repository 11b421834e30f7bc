"""CPU time per thread of a server's processes, from /proc: where a server's CPU went during a
measurement (its event loop's thread, or the others: the HTTP server's own threads, worker threads,
a writer or checkpointer), to say per request what each cost and whether one thread was saturated."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class ThreadCpu:
    """CPU seconds of each thread of a process group's processes, read at one moment."""

    # (pid, tid) → (thread name, CPU seconds); the main thread of a process has tid == pid
    threads: dict[tuple[int, int], tuple[str, float]]

    @classmethod
    def of_group(cls, pgid: int) -> ThreadCpu:
        """Every thread of every live process in the process group `pgid`."""
        threads: dict[tuple[int, int], tuple[str, float]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                if int(stat.read_text().rpartition(")")[2].split()[2]) != pgid:
                    continue
                pid = int(stat.parent.name)
                for task in (stat.parent / "task").iterdir():
                    with contextlib.suppress(OSError, ValueError, IndexError):
                        fields = (task / "stat").read_text().rpartition(")")[2].split()
                        name = (task / "comm").read_text().strip()
                        threads[(pid, int(task.name))] = (name, (int(fields[11]) + int(fields[12])) / CLK_TCK)
        return cls(threads)

    def since(self, before: ThreadCpu) -> dict[tuple[int, int], tuple[str, float]]:
        """CPU seconds each thread used since `before` (threads started meanwhile: all of theirs)."""
        return {key: (name, seconds - before.threads.get(key, (name, 0.0))[1])
                for key, (name, seconds) in self.threads.items()}


@dataclass(frozen=True)
class ThreadShare:
    """What a server's busiest process spent per request: its main thread (the event loop) and
    the rest of its threads, in µs of CPU, and the main thread's share of one core."""

    main_us: float
    others_us: float
    busiest_other_us: float
    main_core_share: float  # CPU seconds of the main thread per second measured (1.0: a full core)

    @property
    def total_us(self) -> float:
        return self.main_us + self.others_us


def thread_share(used: dict[tuple[int, int], tuple[str, float]], requests: int, seconds: float) -> ThreadShare | None:
    """Per request, the threads of the process that used the most CPU (a granian worker, not its
    supervisor); None without requests."""
    if requests <= 0 or seconds <= 0 or not used:
        return None
    by_pid: dict[int, float] = {}
    for (pid, _), (_, cpu) in used.items():
        by_pid[pid] = by_pid.get(pid, 0.0) + cpu
    busiest = max(by_pid, key=by_pid.__getitem__)
    main = sum(cpu for (pid, tid), (_, cpu) in used.items() if pid == busiest and tid == pid)
    others = [cpu for (pid, tid), (_, cpu) in used.items() if pid == busiest and tid != pid]
    return ThreadShare(1e6 * main / requests, 1e6 * sum(others) / requests,
                       1e6 * max(others, default=0.0) / requests, main / seconds)
