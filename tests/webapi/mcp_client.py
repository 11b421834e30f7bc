"""Sentry's MCP server (`@sentry/mcp-server`, pinned in the Makefile's NPM_TOOLS) driven over stdio as
an MCP client does: JSON-RPC 2.0, one message a line; `call(tool, arguments)` gives the tool's text
and whether the server called it an error. No LLM key is passed, so nothing is sent anywhere but to
the Lookout of `--host`."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any

SERVER = Path(__file__).resolve().parents[2] / ".tools/node_modules/@sentry/mcp-server/dist/index.js"
NOT_PASSED = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "SENTRY_DSN", "MCP_SENTRY_DSN", "SENTRY_ACCESS_TOKEN")


class McpServer:
    def __init__(self, host: str, token: str) -> None:
        env = {k: v for k, v in os.environ.items() if k not in NOT_PASSED}
        self.process = subprocess.Popen(
            ["node", str(SERVER), f"--access-token={token}", f"--host={host}", "--insecure-http",
             "--all-skills", "--disable-skills=seer"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.messages: queue.Queue[dict[str, Any]] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.process.stderr or ()), daemon=True).start()
        self.number = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "lookout-tests", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.process.stdout or ():
            if line.strip():
                try:
                    self.messages.put(json.loads(line))
                except ValueError:
                    pass  # a log line, not a message

    def _send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def rpc(self, method: str, params: dict[str, Any], timeout: float = 30) -> dict[str, Any]:
        self.number += 1
        wanted = self.number
        self._send({"jsonrpc": "2.0", "id": wanted, "method": method, "params": params})
        while True:
            message = self.messages.get(timeout=timeout)
            if message.get("id") == wanted and ("result" in message or "error" in message):
                return message

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """(whether the tool failed, its text)."""
        answer = self.rpc("tools/call", {"name": tool, "arguments": arguments})
        if "error" in answer:
            return True, json.dumps(answer["error"])
        result = answer["result"]
        text = "\n".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        return bool(result.get("isError")), text

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
