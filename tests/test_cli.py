"""`python -m app` (app/cli.py): one entry for the projects', accounts' and tokens' commands, and the
older module paths still answering; run as processes on a real SQLite file where it matters."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app import cli, db

ROOT = Path(__file__).resolve().parents[1]


def run(database: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LOOKOUT_PUBLIC_URL")}
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**environ, "DATABASE_URL": f"sqlite:///{database}"})


def test_one_entry_runs_each_command_and_the_old_path_reaches_the_same(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    db.migrate(db.engine(f"sqlite:///{database}"))
    added = run(database, "app", "projects", "--host", "errors.example.test", "add", "Billing service")
    assert added.returncode == 0, added.stderr
    [dsn] = added.stdout.split()  # the new project's DSN
    assert dsn.startswith("http://") and "@errors.example.test/" in dsn
    listed = run(database, "app.inbox.projects", "--host", "errors.example.test", "list")  # the path before
    assert listed.returncode == 0 and "Billing service" in listed.stdout and dsn in listed.stdout


def test_the_entry_dispatches_and_refuses_what_it_does_not_know(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.run([]) == 2 and "projects" in capsys.readouterr().out
    assert cli.run(["--help"]) == 0
    assert cli.run(["nope"]) == 2
    assert "there is no command 'nope'; the commands are projects, accounts, tokens." in capsys.readouterr().err
    with pytest.raises(SystemExit) as accounts_help:  # argparse of app/console/accounts.py
        cli.run(["accounts", "--help"])
    assert accounts_help.value.code == 0 and "python -m app.console.accounts" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # the API tokens' commands (app/webapi/cli.py) under `tokens`
        cli.run(["tokens", "api", "--help"])
    assert "api" in capsys.readouterr().out
