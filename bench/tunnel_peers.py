"""The tunnel benchmark's peers (bench/tunnel.py): how each is started, and where it is ready.

nginx `proxy_pass` (generated config in the run's directory), a naive httpx pass-through
(bench/naive.py), Lookout's tunnel as a bare ASGI app (NORMAL and FULL SQLite synchronous), the
same tunnel inside the Reflex backend, all delivering to the same upstream, whose DSN they are
given; and the tunnel in local mode (no SENTRY_DSN), which commits rows for the embedded inbox
after the app's own before-write step (filters and scrubbing), delivering nothing."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from bench.harness.lookout import NO_INTAKE_LIMITS, OUTBOX_CAP, local_inbox_database
from bench.harness.servers import HOST, free_port, granian
from bench.harness.tools import ensure_binary

PROJECT_ID = "42"
PEERS = ("nginx", "naive", "lookout", "lookout_full", "lookout_reflex", "lookout_local")
# The embedded inbox's DSN in the local-mode row (LOOKOUT_LOCAL_DSN): a project's public key is 32 hex
# digits, as the backend makes one; the host is an identity, never contacted.
LOCAL_DSN = "http://6c1f2e7d8a9b4c3d5e6f708192a3b4c5@localhost/1"

NGINX_CONF = """\
worker_processes {workers};
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {dir}/client_body;
  proxy_temp_path {dir}/proxy;
  fastcgi_temp_path {dir}/fastcgi;
  uwsgi_temp_path {dir}/uwsgi;
  scgi_temp_path {dir}/scgi;
  client_body_buffer_size 64k;
  client_max_body_size 20m;
  keepalive_requests 1000000;
  upstream sentry {{
    server {host}:{upstream_port};
    keepalive 64;
    keepalive_requests 1000000;
  }}
  server {{
    listen {host}:{port};
    location = /ready {{ return 200 "ready"; }}
    location /monitoring {{
      proxy_pass http://sentry/api/{project}/envelope/;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }}
  }}
}}
"""


@dataclass(frozen=True)
class Peer:
    """A tunnel under test: how to start it, and where it is ready."""

    key: str
    label: str
    port: int
    argv: list[str]
    env: dict[str, str]
    ready_path: str
    db_path: Path | None = None  # Lookout's outbox
    local: bool = False  # Lookout in local mode: rows kept for the embedded inbox, none forwarded


def nginx_peer(nginx: str, workdir: Path, upstream_port: int, workers: str) -> Peer:
    directory = workdir / "nginx"
    directory.mkdir()
    for path in (workdir, directory):
        path.chmod(0o755)  # nginx workers run as an unprivileged user
    port = free_port()
    conf = directory / "nginx.conf"
    conf.write_text(NGINX_CONF.format(
        workers=workers, dir=directory, host=HOST, port=port, upstream_port=upstream_port, project=PROJECT_ID,
    ))
    argv = [nginx, "-e", str(directory / "error.log"), "-c", str(conf), "-p", str(directory), "-g", "daemon off;"]
    label = f"nginx proxy_pass ({workers} worker{'s' if workers != '1' else ''})"
    return Peer("nginx", label, port, argv, {}, "/ready")


def naive_peer(dsn: str) -> Peer:
    port = free_port()
    return Peer("naive", "naive httpx (granian, 1 worker)", port, granian("bench.naive:app", port),
                {"SENTRY_DSN": dsn}, "/nothing")


def lookout_peer(workdir: Path, dsn: str, synchronous: str = "NORMAL") -> Peer:
    key = "lookout" if synchronous == "NORMAL" else f"lookout_{synchronous.lower()}"
    port = free_port()
    db_path = workdir / key / "bench.db"
    db_path.parent.mkdir()
    env = {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": dsn,
           "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP), "LOOKOUT_SQLITE_SYNCHRONOUS": synchronous,
           **NO_INTAKE_LIMITS}
    label = "Lookout tunnel (granian, 1 worker)" + ("" if key == "lookout" else f", {synchronous}")
    return Peer(key, label, port, granian("app.standalone.tunnel:app", port), env, "/monitoring/stats", db_path)


def lookout_in_reflex_peer(workdir: Path, dsn: str) -> Peer:
    """The same tunnel inside the Reflex backend (`reflex run --env prod --backend-only`), behind
    Reflex's own outer ASGI layers; its database holds Reflex's tables too."""
    port = free_port()
    db_path = workdir / "lookout_reflex" / "bench.db"
    db_path.parent.mkdir()
    env = {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": dsn,
           "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP), **NO_INTAKE_LIMITS}
    argv = [str(Path(sys.executable).parent / "reflex"), "run", "--env", "prod", "--backend-only",
            "--backend-host", HOST, "--backend-port", str(port), "--loglevel", "warning"]
    return Peer("lookout_reflex", "Lookout tunnel in the Reflex backend", port, argv, env,
                "/monitoring/stats", db_path)


def lookout_local_peer(workdir: Path) -> Peer:
    """`app.standalone.tunnel` in local mode: its envelopes name LOCAL_DSN, and each is filtered and
    scrubbed under its project's options (app/ingest/before_write.py, Lookout's defaults: scrubbing
    on; on the event loop while cheap, else on a worker thread) before its row is committed as
    "local". The database is made first as the backend's start leaves it (migrated, the project
    there); no feeder runs (app.standalone.inbox would read the rows into the inbox meanwhile: the
    inbox's ingest rate, bench/inbox_ingest.py)."""
    port = free_port()
    db_path = workdir / "lookout_local" / "bench.db"
    db_path.parent.mkdir()
    local_inbox_database(db_path, LOCAL_DSN)
    env = {"DATABASE_URL": f"sqlite:///{db_path}", "SENTRY_DSN": "", "LOOKOUT_LOCAL_DSN": LOCAL_DSN,
           "LOOKOUT_OUTBOX_MAX_BYTES": str(OUTBOX_CAP), **NO_INTAKE_LIMITS}
    return Peer("lookout_local", "Lookout tunnel, local inbox DSN", port, granian("app.standalone.tunnel:app", port),
                env, "/monitoring/stats", db_path, local=True)


def chosen_peers(wanted: list[str], workdir: Path, dsn: str, upstream_port: int,
                 nginx_workers: str) -> tuple[list[Peer], dict[str, str]]:
    """The peers asked for, in the table's order, and why any of them is skipped (by key)."""
    peers: list[Peer] = []
    skipped: dict[str, str] = {}
    if "nginx" in wanted:
        nginx = ensure_binary("nginx", "nginx")
        if nginx:
            peers.append(nginx_peer(nginx, workdir, upstream_port, nginx_workers))
        else:
            print("nginx is absent (and could not be installed): its row is skipped.")
            skipped["nginx"] = "nginx is not installed"
    if "naive" in wanted:
        peers.append(naive_peer(dsn))
    if "lookout" in wanted:
        peers.append(lookout_peer(workdir, dsn))
    if "lookout_full" in wanted:
        peers.append(lookout_peer(workdir, dsn, "FULL"))
    if "lookout_reflex" in wanted:
        peers.append(lookout_in_reflex_peer(workdir, dsn))
    if "lookout_local" in wanted:
        peers.append(lookout_local_peer(workdir))
    return peers, skipped
