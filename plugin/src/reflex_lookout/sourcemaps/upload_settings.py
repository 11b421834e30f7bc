"""What the build step needs to know to upload a build's source maps, read once.

A host app (`Monitoring`) reads SENTRY_AUTH_TOKEN, SENTRY_URL, SENTRY_ORG and SENTRY_PROJECT from its
environment (`from_environ`): with a token it makes hidden maps and uploads them; without one it makes
no maps at all. Lookout (the app this plugin comes from) builds its own from its settings: uploads only
in Sentry mode, and keeps more builds for its own library.

The sentry-cli binary of a host app is the `sentry-cli` console script of the Python environment the
build runs in (the PyPI wheel `sentry-cli`, installed by the extra `reflex-lookout[sourcemaps]`), or
the executable LOOKOUT_SENTRY_CLI names.
"""

from __future__ import annotations

import sysconfig
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

CLI_VARIABLE = "LOOKOUT_SENTRY_CLI"
HOST_KEEP = 1  # a host app keeps its newest build's maps only (for a manual upload again)
MAX_VALUE = 1000  # characters of any one variable


@dataclass(frozen=True)
class UploadSettings:
    """`wanted`: whether this app uploads at all (a host app: a token is set; Lookout: Sentry mode).
    `url` "" is sentry-cli's default (sentry.io); `org` "" when an organization token names it."""

    wanted: bool
    url: str
    org: str
    project: str
    token: str = field(repr=False)
    keep: int = HOST_KEEP

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> UploadSettings:
        """A host app's: the SENTRY_* variables of its build's environment (blank or overlong: unset)."""

        def value(name: str) -> str:
            text = environ.get(name, "").strip()
            return text if len(text) <= MAX_VALUE else ""

        token = value("SENTRY_AUTH_TOKEN")
        return cls(bool(token), value("SENTRY_URL").rstrip("/"), value("SENTRY_ORG"), value("SENTRY_PROJECT"), token)


def host_cli(environ: Mapping[str, str]) -> Path:
    """The sentry-cli a host app's build runs: LOOKOUT_SENTRY_CLI, else the console script installed
    beside this Python (the `sentry-cli` wheel's, in the venv's `bin/`)."""
    named = environ.get(CLI_VARIABLE, "").strip()
    return Path(named) if named else Path(sysconfig.get_path("scripts")) / "sentry-cli"
