"""The alert benchmark's webhook receiver (bench/alert_latency.py): a stdlib HTTP server in a process
of its own (in a thread of the benchmark the posting clients would hold the GIL while an alert
waits to be read); it answers 200 "ok" and writes each request's arrival and body to a file, read
back here as messages, each with the tokens of the alerts it lists (from titles that carry
"bench alert <letters>", as the benchmark's events do)."""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bench.harness.processes import Processes
from bench.harness.servers import HOST, free_port, wait_ready

TOKEN = re.compile(r"bench alert ([a-z]+)")

# The receiver, run as `python -c RECEIVER <port> <file>`: one JSON line per request.
RECEIVER = r"""
import http.server, json, sys, threading, time
port, path = int(sys.argv[1]), sys.argv[2]
out, lock = open(path, "a", buffering=1), threading.Lock()
class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 16 << 20))
        at = time.time()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")
        with lock:
            out.write(json.dumps({"at": at, "path": self.path, "body": body.decode("utf-8", "replace")}) + "\n")
    def log_message(self, *_):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


@dataclass(frozen=True)
class Message:
    at: float
    path: str
    tokens: tuple[str, ...]  # one per alert listed, from its title


def lookout_titles(body: dict) -> list[str]:
    return [str(alert.get("issue", {}).get("title", "")) for alert in body.get("alerts", [])]


def slack_titles(body: dict) -> list[str]:
    return [str(body["blocks"][0]["text"]["text"])] if body.get("blocks") else [str(body.get("text", ""))]


class Receiver:
    """The receiver process and what it wrote; each peer and pattern posts to a path of its own."""

    def __init__(self, processes: Processes, workdir: Path) -> None:
        self.port, self.file = free_port(), workdir / "received.jsonl"
        self.file.touch()
        self._read = 0  # bytes of the file parsed so far ...
        self._records: list[dict] = []  # ... and what they held
        processes.start("receiver", [sys.executable, "-c", RECEIVER, str(self.port), str(self.file)])
        wait_ready(processes, "receiver", self.port, "/")

    def url(self, path: str) -> str:
        return f"http://{HOST}:{self.port}{path}"

    def messages(self, path: str, titles: Callable[[dict], list[str]]) -> list[Message]:
        with self.file.open("rb") as file:  # only what came since the last call is parsed
            file.seek(self._read)
            data = file.read()
        complete = data[: data.rfind(b"\n") + 1]
        self._read += len(complete)
        self._records += [json.loads(line) for line in complete.splitlines()]
        found = []
        for record in (r for r in self._records if r["path"] == path):
            try:
                names = titles(json.loads(record["body"]))
            except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                names = []
            tokens = tuple(match.group(1) for name in names if (match := TOKEN.search(name)))
            found.append(Message(record["at"], path, tokens))
        return found

    def wait(self, path: str, titles: Callable[[dict], list[str]], want: set[str], idle_s: float,
             limit_s: float) -> list[Message]:
        """Until every token in `want` has arrived, nothing has come for `idle_s`, or `limit_s` passed."""
        start = last_change = time.monotonic()
        seen = -1
        while True:
            messages = self.messages(path, titles)
            if want <= {name for message in messages for name in message.tokens}:
                return messages
            if len(messages) != seen:
                seen, last_change = len(messages), time.monotonic()
            now = time.monotonic()
            if now - last_change > idle_s or now - start > limit_s:
                return messages
            time.sleep(0.05)
