"""Lookout's own use of the build step (reflex_lookout/sourcemaps/): which sentry-cli, where its maps go,
how many builds it keeps.

Lookout makes maps on every production build (`for_library`: its own library imports them at start,
app/sourcemaps/library.py, whatever the mode) with the sentry-cli pinned under `.tools/` (`make setup`,
from npm), and uploads them only in Sentry mode (SENTRY_DSN set, with SENTRY_AUTH_TOKEN, SENTRY_ORG,
SENTRY_PROJECT), keeping LOOKOUT_SOURCEMAP_BUILDS bundles; a failed upload is retried at each start
(`retry_at_start`, a lifespan task of app/app.py).
"""

from __future__ import annotations

from pathlib import Path

from app.settings import SETTINGS, Settings
from reflex_lookout.sourcemaps.build_step import SourceMapsPlugin
from reflex_lookout.sourcemaps.upload_settings import UploadSettings

ROOT = Path(__file__).resolve().parent.parent.parent
SENTRY_CLI = ROOT / ".tools" / "node_modules" / ".bin" / "sentry-cli"


def upload_settings(settings: Settings = SETTINGS) -> UploadSettings:
    """Lookout's upload settings: uploads wanted in Sentry mode only."""
    return UploadSettings(settings.dsn is not None, settings.sentry_url, settings.sentry_org,
                          settings.sentry_project, settings.sentry_auth_token, settings.sourcemap_builds)


def plugin(bundles: Path | None = None, settings: Settings = SETTINGS) -> SourceMapsPlugin:
    """The build step as rxconfig.py installs it."""
    return SourceMapsPlugin(SENTRY_CLI, upload_settings(settings), bundles=bundles, root=ROOT, for_library=True)
