"""Reflex configuration: app name, database, Redis, bun and plugins — nothing else."""

import os
from pathlib import Path

import reflex as rx

from app.monitoring.browser import BrowserMonitoringPlugin
from app.monitoring.vite_config import ViteConfigPlugin
from app.sourcemaps import own_build

ROOT = Path(__file__).resolve().parent
# SQLite lives in a hidden folder: dev-mode hot reload watches the project's visible files, and
# every write to `lookout.db-wal` beside the code would restart the backend.
DATA_DIR = ROOT / ".data"
DATA_DIR.mkdir(exist_ok=True)

config = rx.Config(
    app_name="app",
    # SQLite by default: `make run` needs no database server.
    db_url=os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'lookout.db'}",
    # With Redis, Reflex keeps page state there and `--env prod` runs several backend workers
    # (GRANIAN_WORKERS of them; 2 × cores + 1 by default); without it, one worker keeps it in memory.
    redis_url=os.environ.get("REDIS_URL") or None,
    # The bun binary from the npm registry's `bun` package, installed by `make setup`;
    # Reflex would otherwise try to download it from the internet.
    bun_path=ROOT / ".tools" / "node_modules" / "bun" / "bin" / "bun.exe",
    telemetry_enabled=False,
    show_built_with_reflex=False,
    plugins=[rx.plugins.RadixThemesPlugin(), ViteConfigPlugin(), BrowserMonitoringPlugin(), own_build.plugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
