"""The other machine of the tests (tests/netns.py): a server here sees its requests come from the
namespace's address, and from it this machine's loopback is out of reach."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import netns

FETCH = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())"


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    """An HTTP server on every address of this machine that answers with the client's address."""

    class Echo(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # the standard library's name
            body = self.client_address[0].encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    serving = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Echo)
    threading.Thread(target=serving.serve_forever, daemon=True).start()
    try:
        yield serving.server_address[1]
    finally:
        serving.shutdown()
        serving.server_close()


def fetch(elsewhere: netns.Namespace, url: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(elsewhere.command(sys.executable, "-c", FETCH, url), capture_output=True, text=True, timeout=30)


def test_requests_from_the_namespace_come_from_its_address(elsewhere: netns.Namespace, server: int) -> None:
    answer = fetch(elsewhere, f"http://{elsewhere.host_address}:{server}/")
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.strip() == elsewhere.address


def test_this_machines_loopback_is_out_of_reach(elsewhere: netns.Namespace, server: int) -> None:
    answer = fetch(elsewhere, f"http://127.0.0.1:{server}/")  # the namespace's own loopback: nothing listens
    assert answer.returncode != 0 and "Connection refused" in answer.stderr


def test_the_namespace_is_removed_afterwards() -> None:
    if netns.unavailable() is not None:
        pytest.skip(netns.unavailable() or "")
    with netns.namespace() as made:
        assert made.name in subprocess.run([netns.IP, "netns", "list"], capture_output=True, text=True).stdout
    assert made.name not in subprocess.run([netns.IP, "netns", "list"], capture_output=True, text=True).stdout


def test_a_namespace_left_by_a_killed_run_is_removed_by_the_next() -> None:
    if netns.unavailable() is not None:
        pytest.skip(netns.unavailable() or "")
    dead = next(pid for pid in range(4_194_000, 1, -1) if not Path(f"/proc/{pid}").exists())
    left = f"{netns.PREFIX}{dead}-0"
    subprocess.run([netns.IP, "netns", "add", left], check=True)
    try:
        with netns.namespace():
            assert left not in subprocess.run([netns.IP, "netns", "list"], capture_output=True, text=True).stdout
    finally:
        subprocess.run([netns.IP, "netns", "del", left], capture_output=True)
