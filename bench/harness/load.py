"""Load generation: `wrk` (1 thread, keep-alive connections, a Lua script POSTing one body), or
bench/loadgen.py (asyncio) without it; both print one `RESULT_JSON` line, read here as a `Load`."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.harness.processes import ROOT
from bench.harness.servers import HOST
from bench.harness.tools import ensure_binary

WRK_SCRIPT = """\
local file = assert(io.open("{body}", "rb"))
wrk.method = "POST"
wrk.body = file:read("*a")
file:close()
wrk.headers["Content-Type"] = "application/x-sentry-envelope"

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT_JSON {{"requests":%d,"duration_us":%d,"status_errors":%d,"socket_errors":%d,' ..
    '"p50_us":%.1f,"p99_us":%.1f,"max_us":%.1f}}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
"""


@dataclass(frozen=True)
class Load:
    """What one load-generator run measured."""

    requests: int
    non_2xx: int
    socket_errors: int
    seconds: float
    p50_ms: float
    p99_ms: float

    @property
    def accepted(self) -> int:
        return self.requests - self.non_2xx

    @property
    def per_s(self) -> float:
        return self.accepted / self.seconds if self.seconds else 0.0

    @classmethod
    def from_json(cls, data: dict[str, float]) -> Load:
        return cls(
            requests=int(data["requests"]), non_2xx=int(data["status_errors"]),
            socket_errors=int(data["socket_errors"]), seconds=data["duration_us"] / 1e6,
            p50_ms=data["p50_us"] / 1e3, p99_ms=data["p99_us"] / 1e3,
        )


@dataclass(frozen=True)
class LoadGenerator:
    wrk: str | None
    body_path: Path
    script_path: Path
    connections: int
    why_not_wrk: str = ""

    @property
    def label(self) -> str:
        return "wrk, 1 thread" if self.wrk else f"bench/loadgen.py (asyncio; {self.why_not_wrk})"

    def argv(self, port: int, seconds: int) -> list[str]:
        if self.wrk:
            return [
                self.wrk, "-t1", f"-c{self.connections}", f"-d{seconds}s", "--timeout", "10s",
                "--latency", "-s", str(self.script_path), f"http://{HOST}:{port}/monitoring",
            ]
        return [
            sys.executable, "-m", "bench.loadgen", "--host", HOST, "--port", str(port),
            "--body", str(self.body_path), "--connections", str(self.connections), "--seconds", str(seconds),
        ]

    def run(self, port: int, seconds: int) -> tuple[Load, float]:
        """One bounded run; also returns the CPU seconds the generator used."""
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = subprocess.run(
            self.argv(port, seconds), cwd=ROOT, capture_output=True, text=True, timeout=seconds + 60, check=False,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        for line in reversed(result.stdout.splitlines()):
            if line.startswith("RESULT_JSON "):
                return Load.from_json(json.loads(line.removeprefix("RESULT_JSON "))), cpu
        raise RuntimeError(f"the load generator printed no result:\n{result.stdout}\n{result.stderr}")


def load_generator(workdir: Path, body: bytes, connections: int, python: bool = False,
                   name: str = "envelope") -> LoadGenerator:
    """A generator POSTing `body` to /monitoring: wrk when it is (or can be) installed, unless `python`.
    `name`: of its body's file in `workdir` (`name`.bin), for a second body in one run."""
    body_path = workdir / f"{name}.bin"
    body_path.write_bytes(body)
    script_path = workdir / ("post.lua" if name == "envelope" else f"post-{name}.lua")
    script_path.write_text(WRK_SCRIPT.format(body=body_path))
    wrk = None if python else ensure_binary("wrk", "wrk")
    why = "--loadgen python" if python else "wrk is not installed"
    return LoadGenerator(wrk, body_path, script_path, connections, why)
