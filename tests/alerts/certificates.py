"""A self-signed certificate for the alert tests' TLS servers (tests/alerts/receivers.py), made
with the `openssl` CLI once per process: its `server_context()` serves it, its `client_context()`
trusts it and nothing else."""

from __future__ import annotations

import atexit
import functools
import ipaddress
import shutil
import ssl
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HOST = "127.0.0.1"


@dataclass(frozen=True)
class Certificate:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key (PEM files)."""

    cert: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, self.key)
        return context

    def client_context(self) -> ssl.SSLContext:
        """Verifies the peer (name included) against this certificate alone."""
        return ssl.create_default_context(cafile=str(self.cert))


@functools.cache
def certificate(*names: str) -> Certificate:
    """A self-signed certificate for `names` (default: localhost and 127.0.0.1), made once per
    process on first use and removed at exit."""
    names = names or ("localhost", HOST)
    folder = Path(tempfile.mkdtemp(prefix="lookout-cert-"))
    atexit.register(shutil.rmtree, folder, True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    alt = ",".join(f"IP:{name}" if _is_ip(name) else f"DNS:{name}" for name in names)
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
         "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", f"/CN={names[0]}",
         "-addext", f"subjectAltName={alt}", "-addext", "basicConstraints=critical,CA:TRUE"],
        check=True, capture_output=True)
    return Certificate(cert, key)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False
