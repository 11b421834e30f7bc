"""Another machine for the tests: a network namespace joined to this one by a veth pair.

A client started with `Namespace.command(...)` (`ip netns exec`) has one address, `address`, on a
/30 link whose other end, `host_address`, is this machine; a server bound to 0.0.0.0 here is at
`host_address` for it, and the client reaches nothing else (no route). So "a request from another
machine" is real, and no test depends on this machine's own network addresses.

    with namespace() as elsewhere:
        subprocess.run(elsewhere.command("curl", f"http://{elsewhere.host_address}:{port}/"))

Creating one needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and `ip` (Debian's iproute2);
`unavailable()` says why not. Each is named after the process that made it (and a count, for a
process may make a few), and one left behind by a process that no longer runs (killed) is removed
by the next.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

IP = shutil.which("ip") or "/usr/sbin/ip"
PREFIX = "lookout-"
_made = itertools.count()


class NamespaceError(RuntimeError):
    """An `ip` command failed; the message carries its output."""


@dataclass(frozen=True)
class Namespace:
    name: str
    host_address: str  # this machine's end of the link
    address: str  # the namespace's own address

    def command(self, *argv: str) -> list[str]:
        """`argv` run inside the namespace."""
        return [IP, "netns", "exec", self.name, *argv]


def unavailable() -> str | None:
    """Why no namespace can be made here, or None."""
    if not Path(IP).exists():
        return "`ip` is not installed (Debian's iproute2; `make test-deps` installs it)"
    if os.geteuid() != 0:
        return "making a network namespace needs root"
    return None


def addresses(pid: int, count: int = 0) -> tuple[str, str]:
    """A /30 of 10.213.0.0/16 of the process's own (one of four), so that concurrent runs do not share one."""
    third, fourth = divmod(((pid * 4 + count % 4) % 16384) * 4, 256)
    return f"10.213.{third}.{fourth + 1}", f"10.213.{third}.{fourth + 2}"


@contextlib.contextmanager
def namespace() -> Iterator[Namespace]:
    """A fresh namespace with its link up; removed afterwards, whatever happened."""
    reason = unavailable()
    if reason is not None:
        raise NamespaceError(reason)
    _remove_orphans()
    pid, count = os.getpid(), next(_made)
    host_address, address = addresses(pid, count)
    made = Namespace(f"{PREFIX}{pid}-{count}", host_address, address)
    outside, inside = _link(pid, count), f"lk{pid}-{count}n"
    try:
        _ip("netns", "add", made.name)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", made.name)
        # No IPv6 link-local address on either end: one would finish its duplicate address detection
        # ~1 s after the link is up, and Chromium, seeing this machine's addresses change then, aborts
        # the page loads under way with net::ERR_NETWORK_CHANGED (seen: a browser test's page never
        # hydrated, its scripts failed to load 1.1 s after the namespace was made).
        _ip("link", "set", "dev", outside, "addrgenmode", "none")
        _ip("-n", made.name, "link", "set", "dev", inside, "addrgenmode", "none")
        _ip("addr", "add", f"{host_address}/30", "dev", outside)
        _ip("link", "set", outside, "up")
        _ip("-n", made.name, "addr", "add", f"{address}/30", "dev", inside)
        _ip("-n", made.name, "link", "set", inside, "up")
        _ip("-n", made.name, "link", "set", "lo", "up")
        yield made
    finally:
        _remove(made.name, outside)


def _link(pid: int, count: int | str) -> str:
    return f"lk{pid}-{count}h"  # an interface's name has at most 15 characters


def _ip(*argv: str) -> None:
    done = subprocess.run([IP, *argv], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise NamespaceError(f"ip {' '.join(argv)}: {done.stderr.strip() or done.returncode}")


def _remove(name: str, outside: str) -> None:
    # Deleting either end of a veth pair deletes both; the namespace goes with its last user.
    for argv in (("link", "del", outside), ("netns", "del", name)):
        subprocess.run([IP, *argv], capture_output=True, timeout=30)


def _remove_orphans() -> None:
    """Namespaces (and their links) of test processes that were killed before they cleaned up."""
    listed = subprocess.run([IP, "netns", "list"], capture_output=True, text=True, timeout=30).stdout
    for line in listed.splitlines():
        name = line.split(" ", 1)[0]
        pid, _, count = name.removeprefix(PREFIX).partition("-")
        if name.startswith(PREFIX) and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            _remove(name, _link(int(pid), count))
