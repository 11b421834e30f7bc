"""Every error-reporting constant, read from the environment once.

This module is the single source of truth: the browser configuration, the backend SDK and the
tunnel are all built from `SETTINGS`. Nothing here is repeated by hand anywhere else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_TUNNEL_PATH = "/monitoring"


class SettingsError(ValueError):
    """An environment variable holds a value Lookout cannot use."""


@dataclass(frozen=True)
class Dsn:
    """A parsed Sentry DSN: `{scheme}://{public_key}@{host}[:{port}]{path_prefix}/{project_id}`."""

    scheme: str
    public_key: str
    host: str
    port: int | None
    path_prefix: str
    project_id: str

    @classmethod
    def parse(cls, text: str) -> Dsn:
        parts = urlsplit(text.strip())
        if parts.scheme not in ("http", "https"):
            raise SettingsError(f"DSN {text!r} must start with http:// or https://.")
        if not parts.username or not parts.hostname:
            raise SettingsError(f"DSN {text!r} must name a public key and a host (key@host).")
        prefix, _, project_id = parts.path.rstrip("/").rpartition("/")
        if not project_id.isdigit():
            raise SettingsError(f"DSN {text!r} must end with a numeric project id.")
        try:
            port = parts.port
        except ValueError as exc:
            raise SettingsError(f"DSN {text!r} has an invalid port.") from exc
        return cls(parts.scheme, parts.username, parts.hostname, port, prefix, project_id)

    @property
    def netloc(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.public_key}@{self.netloc}{self.path_prefix}/{self.project_id}"


@dataclass(frozen=True)
class Settings:
    """Error-reporting settings. Fields without an environment variable are fixed by the spec."""

    dsn: Dsn | None
    environment: str
    release: str | None
    tunnel_path: str
    # Fixed by the specification (sections 8 and 9).
    traces_sample_rate: float = 1.0
    enable_logs: bool = True
    debug: bool = False
    max_breadcrumbs: int = 100
    transport_buffer_size: int = 64
    max_stack_frames: int = 50
    max_stack_line_length: int = 1024
    idle_span_timeout_ms: int = 1000
    final_span_timeout_ms: int = 30000
    child_span_timeout_ms: int = 15000
    route_load_timeout_ms: int = 3800

    @property
    def destination(self) -> str:
        """Where reports go, in words: the DSN's host, or the embedded inbox."""
        return self.dsn.netloc if self.dsn else "local inbox"

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Settings:
        dsn_text = env.get("SENTRY_DSN", "").strip()
        tunnel_path = env.get("LOOKOUT_TUNNEL_PATH", DEFAULT_TUNNEL_PATH).strip()
        if not tunnel_path.startswith("/") or tunnel_path == "/" or "?" in tunnel_path:
            raise SettingsError(
                f"LOOKOUT_TUNNEL_PATH {tunnel_path!r} must be an absolute path like /monitoring."
            )
        route_timeout = env.get("LOOKOUT_ROUTE_LOAD_TIMEOUT_MS", "3800").strip()
        if not route_timeout.isdigit() or int(route_timeout) == 0:
            raise SettingsError(
                f"LOOKOUT_ROUTE_LOAD_TIMEOUT_MS {route_timeout!r} must be a positive whole number."
            )
        return cls(
            dsn=Dsn.parse(dsn_text) if dsn_text else None,
            environment=env.get("SENTRY_ENVIRONMENT", "").strip() or "development",
            release=env.get("SENTRY_RELEASE", "").strip() or None,
            tunnel_path=tunnel_path.rstrip("/"),
            route_load_timeout_ms=int(route_timeout),
        )


SETTINGS = Settings.from_env()
