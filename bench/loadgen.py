"""Fallback load generator when `wrk` is missing: N keep-alive HTTP/1.1 connections, asyncio streams.

    python -m bench.loadgen --host 127.0.0.1 --port P --path /monitoring --body envelope.bin \\
        --connections 32 --seconds 10

Each connection POSTs the body, reads the whole answer (Content-Length bodies only), and repeats
until the deadline. Prints one line `RESULT_JSON {...}` with the same fields as the wrk script.
Slower than wrk (pure Python): it may cap the fastest peers, which the table says.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass, field

from bench.harness.stats import percentile


@dataclass
class Tally:
    latencies_us: list[float] = field(default_factory=list)
    status_errors: int = 0
    socket_errors: int = 0


def request_bytes(host: str, port: int, path: str, body: bytes) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
        f"Content-Type: application/x-sentry-envelope\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in header_lines:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
        elif name.strip().lower() == "transfer-encoding":
            raise ValueError("chunked answers are not supported by this load generator")
    await reader.readexactly(length)
    return int(status_line.split()[1])


async def connection(host: str, port: int, request: bytes, deadline: float, tally: Tally) -> None:
    while time.perf_counter() < deadline:
        try:
            reader, writer = await asyncio.open_connection(host, port)
        except OSError:
            tally.socket_errors += 1
            await asyncio.sleep(0.01)
            continue
        try:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                writer.write(request)
                status = await read_response(reader)
                tally.latencies_us.append((time.perf_counter() - started) * 1e6)
                if status >= 400:
                    tally.status_errors += 1
        except (OSError, asyncio.IncompleteReadError, ValueError):
            tally.socket_errors += 1
        finally:
            writer.close()


async def run(host: str, port: int, path: str, body: bytes, connections: int, seconds: float) -> dict[str, float]:
    request = request_bytes(host, port, path, body)
    tally = Tally()
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(*(connection(host, port, request, deadline, tally) for _ in range(connections)))
    latencies = sorted(tally.latencies_us)
    return {
        "requests": len(latencies), "duration_us": (time.perf_counter() - started) * 1e6,
        "status_errors": tally.status_errors, "socket_errors": tally.socket_errors,
        "p50_us": percentile(latencies, 0.50), "p99_us": percentile(latencies, 0.99),
        "max_us": latencies[-1] if latencies else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/monitoring")
    parser.add_argument("--body", required=True)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit("this load generator only targets the loopback interface")
    with open(args.body, "rb") as file:
        body = file.read()
    result = asyncio.run(run(args.host, args.port, args.path, body, args.connections, args.seconds))
    print("RESULT_JSON " + json.dumps(result))


if __name__ == "__main__":
    main()
