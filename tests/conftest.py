"""Shared test set-up: tests run in local mode, whatever the developer's shell holds."""

import os

# Settings are read once at import, so this must happen before `app` is imported.
os.environ["SENTRY_DSN"] = ""
