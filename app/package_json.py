"""`.web/package.json` kept on one line, as Reflex writes it, so the copy Reflex persists in
`reflex.lock/package.json` (committed) stays as committed.

Reflex renders `.web/package.json` on one line (`json.dumps`), runs `bun add` for its pinned
packages, and copies the file back to `reflex.lock/` after every install. bun leaves the file alone
when nothing changes, but pretty-prints it (2-space indents) whenever it changes a package, and from
then on every run copies the pretty form back: `git status` showed `reflex.lock/package.json`
rewritten in 37 lines. rxconfig.py calls `keep_compact` before each `reflex` command reads the
project, so what is copied back is the one-line form again (the same content)."""

from __future__ import annotations

import json
from pathlib import Path


def keep_compact(web_dir: Path) -> bool:
    """Rewrite `web_dir/package.json` on one line, as Reflex writes it, if it is valid JSON written
    otherwise; whether it was rewritten (a missing or unreadable file is left to Reflex)."""
    path = web_dir / "package.json"
    try:
        text = path.read_text()
        compact = json.dumps(json.loads(text))
    except (OSError, ValueError):
        return False
    if text == compact:
        return False
    path.write_text(compact)
    return True
