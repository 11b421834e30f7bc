"""Reading one setting's value: a Sentry DSN (`Dsn`) and the forms LOOKOUT_* variables take (a
switch, a log level, words, whole numbers, a public URL); a value Lookout cannot use raises
`SettingsError`. The settings themselves, read once: app/settings.py."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit


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
        try:
            parts = urlsplit(text.strip())
        except ValueError as exc:  # e.g. an unclosed "[" of an IPv6 address
            raise SettingsError(f"DSN {text!r} is not a URL ({exc}).") from exc
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

    @property
    def envelope_url(self) -> str:
        """Sentry's ingestion endpoint for this DSN."""
        return f"{self.scheme}://{self.netloc}{self.path_prefix}/api/{self.project_id}/envelope/"

    @property
    def auth_header(self) -> str:
        """`X-Sentry-Auth` for requests to `envelope_url`."""
        return f"Sentry sentry_version=7, sentry_key={self.public_key}, sentry_client=lookout-tunnel/1.0"


def switch(env: Mapping[str, str], name: str, default: bool) -> bool:
    text = env.get(name, "").strip().lower()
    if not text:
        return default
    if text not in ("on", "off", "true", "false", "1", "0"):
        raise SettingsError(f"{name} {text!r} must be on or off.")
    return text in ("on", "true", "1")


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def log_level(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip().upper()
    if not text:
        return default
    if text not in LOG_LEVELS:
        raise SettingsError(f"{name} {text!r} must be one of {', '.join(LOG_LEVELS)}.")
    return logging.getLevelName(text)


def words(text: str) -> list[str]:
    return text.replace(",", " ").split()


def positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit() or int(text) == 0:
        raise SettingsError(f"{name} {text!r} must be a positive whole number.")
    return int(text)


def public_url(env: Mapping[str, str], name: str) -> str:
    text = env.get(name, "").strip().rstrip("/")
    if not text:
        return ""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError for a bad port)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise SettingsError(f"{name} {text!r} must be the URL users open, like https://lookout.example.com.")
    return text


def whole_number(env: Mapping[str, str], name: str, default: int) -> int:
    text = env.get(name, "").strip()
    if not text:
        return default
    if not text.isdigit():
        raise SettingsError(f"{name} {text!r} must be a whole number (0 or more).")
    return int(text)
