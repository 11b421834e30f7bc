"""A load generator for many distinct requests, each sent once, in order: N keep-alive HTTP/1.1
connections (asyncio streams, as bench/loadgen.py), each taking the next request when it is free:
as fast as the server answers, or each request at its turn of a steady rate. Run in a process of
its own, so that its CPU is not the benchmark's:

    python -m bench.harness.mixload --port P --requests FILE --connections 8 [--rate R] --out FILE

FILE holds whole HTTP requests back to back, FILE.index their [offset, length] (`write_requests`).
Writes, per request, when it was sent and answered (`time.time()`) and the status (0: the
connection failed) to --out as JSON, and prints one `RESULT_JSON` line (bench/harness/load.py's
fields, and the loader's own CPU seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.harness.servers import HOST
from bench.harness.stats import percentile
from bench.loadgen import read_response


def write_requests(path: Path, requests: Iterable[bytes]) -> int:
    """Write `requests` to `path` and their offsets to `path`.index; how many."""
    index = []
    with path.open("wb") as file:
        for request in requests:
            index.append([file.tell(), len(request)])
            file.write(request)
    path.with_suffix(path.suffix + ".index").write_text(json.dumps(index))
    return len(index)


def read_requests(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[offset:offset + length]
            for offset, length in json.loads(path.with_suffix(path.suffix + ".index").read_text())]


@dataclass(frozen=True)
class Answers:
    """What a run of the loader saw, per request (in the requests' order)."""

    sent: list[float]
    answered: list[float]
    status: list[int]

    @classmethod
    def read(cls, path: Path) -> Answers:
        data = json.loads(path.read_text())
        return cls(data["sent"], data["answered"], data["status"])

    @property
    def accepted(self) -> list[int]:
        """The requests answered 2xx."""
        return [n for n, status in enumerate(self.status) if 200 <= status < 300]

    @property
    def first_sent(self) -> float:
        return min(self.sent)

    @property
    def last_answered(self) -> float:
        return max(self.answered)


async def _connection(port: int, requests: list[bytes], turns: Iterator[int], start: float, rate: float,
                      answers: dict[str, list[float]], errors: list[int]) -> None:
    reader = writer = None
    for n in turns:
        if rate:
            await asyncio.sleep(max(0.0, start + n / rate - time.time()))
        for attempt in range(2):
            try:
                if writer is None:
                    reader, writer = await asyncio.open_connection(HOST, port)
                assert reader is not None
                answers["sent"][n] = time.time()
                writer.write(requests[n])
                status = await read_response(reader)
                answers["answered"][n], answers["status"][n] = time.time(), status
                break
            except (OSError, asyncio.IncompleteReadError, ValueError):
                errors.append(n)
                if writer is not None:
                    writer.close()
                reader = writer = None
                if attempt:
                    answers["answered"][n], answers["status"][n] = time.time(), 0
    if writer is not None:
        writer.close()


async def run(port: int, requests: list[bytes], connections: int, rate: float) -> tuple[dict[str, list[float]], list[int]]:
    count = len(requests)
    answers: dict[str, list[float]] = {"sent": [0.0] * count, "answered": [0.0] * count, "status": [0] * count}
    errors: list[int] = []
    turns = iter(range(count))
    start = time.time()
    await asyncio.gather(*(_connection(port, requests, turns, start, rate, answers, errors)
                           for _ in range(connections)))
    return answers, errors


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--requests", type=Path, required=True)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--rate", type=float, default=0.0, help="requests a second (0: as fast as answered)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    requests = read_requests(args.requests)
    answers, errors = asyncio.run(run(args.port, requests, args.connections, args.rate))
    args.out.write_text(json.dumps(answers))
    latencies = [(a - s) * 1e6 for s, a in zip(answers["sent"], answers["answered"], strict=True)]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print("RESULT_JSON " + json.dumps({
        "requests": len(requests), "duration_us": (max(answers["answered"]) - min(answers["sent"])) * 1e6,
        "status_errors": sum(1 for s in answers["status"] if not 200 <= s < 300),
        "socket_errors": len(errors), "p50_us": percentile(latencies, 0.5), "p99_us": percentile(latencies, 0.99),
        "max_us": max(latencies, default=0.0), "cpu_s": usage.ru_utime + usage.ru_stime,
    }), flush=True)


if __name__ == "__main__":
    main()
