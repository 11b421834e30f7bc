"""A Sentry DSN, parsed and checked (`Dsn.parse`), and what is made of it: the ingestion endpoint
(`envelope_url`) and the `X-Sentry-Auth` header for it."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from reflex_lookout.settings_error import SettingsError


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
    def parse(cls, text: str, name: str = "DSN") -> Dsn:
        """`name` says where the text came from, for the sentence of a `SettingsError`."""
        try:
            parts = urlsplit(text.strip())
        except ValueError as exc:  # e.g. an unclosed "[" of an IPv6 address
            raise SettingsError(f"{name} {text!r} is not a URL ({exc}).") from exc
        if parts.scheme not in ("http", "https"):
            raise SettingsError(f"{name} {text!r} must start with http:// or https://.")
        if not parts.username or not parts.hostname:
            raise SettingsError(f"{name} {text!r} must name a public key and a host (key@host).")
        prefix, _, project_id = parts.path.rstrip("/").rpartition("/")
        if not project_id.isdigit():
            raise SettingsError(f"{name} {text!r} must end with a numeric project id.")
        try:
            port = parts.port
        except ValueError as exc:
            raise SettingsError(f"{name} {text!r} has an invalid port.") from exc
        return cls(parts.scheme, parts.username, parts.hostname, port, prefix, project_id)

    @property
    def netloc(self) -> str:
        return self.host if self.port is None else f"{self.host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.public_key}@{self.netloc}{self.path_prefix}/{self.project_id}"

    @property
    def envelope_url(self) -> str:
        """Sentry's ingestion endpoint for this DSN."""
        return f"{self.scheme}://{self.netloc}{self.path_prefix}/api/{self.project_id}/envelope/"

    @property
    def auth_header(self) -> str:
        """`X-Sentry-Auth` for requests to `envelope_url`."""
        return f"Sentry sentry_version=7, sentry_key={self.public_key}, sentry_client=lookout-tunnel/1.0"
