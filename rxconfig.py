"""Reflex configuration: app name, database, Redis, bun and plugins — nothing else."""

import os
from pathlib import Path

import reflex as rx

import reflex_lookout
from app import package_json
from app.sourcemaps import own_build

ROOT = Path(__file__).resolve().parent
# SQLite lives in a hidden folder: dev-mode hot reload watches the project's visible files, and
# every write to `lookout.db-wal` beside the code would restart the backend.
DATA_DIR = ROOT / ".data"
DATA_DIR.mkdir(exist_ok=True)
# bun pretty-prints .web/package.json when it changes a package; Reflex copies it to the committed
# reflex.lock/package.json after each install: kept on one line, as Reflex writes it.
package_json.keep_compact(ROOT / ".web")

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
    # Lookout's monitoring is the reflex-lookout plugin's (plugin/), as any Reflex app's: its pages
    # report with the embedded inbox's DSN unless SENTRY_DSN is set (app/local_inbox.py), and the
    # dev server also proxies the inbox's endpoints (/api/) to the backend.
    plugins=[rx.plugins.RadixThemesPlugin(),
             reflex_lookout.Monitoring(destination="app.local_inbox:destination", dev_proxy=("/api/",)),
             # Its production build's source maps: made on every build for its own symbolication.
             own_build.plugin()],
    disable_plugins=[rx.plugins.SitemapPlugin],
)
