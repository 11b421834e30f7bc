"""The Debian tools a benchmark needs (wrk, nginx): found on PATH or in /usr/sbin, installed with
apt-get when missing and we are root."""

from __future__ import annotations

import os
import shutil
import subprocess


def ensure_binary(binary: str, package: str) -> str | None:
    """The binary's path; installs the Debian package when missing and we are root."""
    found = shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/bin")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print(f"  {binary} is missing: apt-get install -y {package} ...", flush=True)
    subprocess.run(
        ["apt-get", "install", "-y", "-q", package], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}, check=False,
    )
    return shutil.which(binary) or shutil.which(binary, path="/usr/sbin:/usr/bin")
