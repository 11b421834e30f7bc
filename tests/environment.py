"""The tests' environment, light enough for tests/conftest.py to import before anything else: whether
they run in CI, and the local DSN they use."""

from __future__ import annotations

import os

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# The tests' local DSN: a real install's key is random, made once and kept in its database
# (app/projects/registry.py). `Settings.from_env(LOCAL_ENV)`: local-mode settings that name it.
LOCAL_DSN = "http://lookout@localhost/1"
LOCAL_ENV = {"LOOKOUT_LOCAL_DSN": LOCAL_DSN}
