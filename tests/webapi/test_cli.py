"""app/webapi/cli.py through `python -m app.inbox.tokens`, run as a process on a real SQLite file: `api`
prints a token once with how to send it, `api-list` lists tokens without their secrets, `api-revoke`
revokes; what it cannot do is a sentence and exit status 2; the upload tokens' commands still answer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy

from app import db
from app.console.accounts import Accounts
from app.webapi import cli as api_cli
from app.webapi.auth import ApiAuthError, authenticate
from app.webapi.tokens import ApiTokens

ROOT = Path(__file__).resolve().parents[2]
WHEN = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"


def cli(database: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("LOOKOUT_PUBLIC_URL", "DATABASE_URL", "LOOKOUT_CONSOLE_USERS")}
    return subprocess.run([sys.executable, "-m", "app.inbox.tokens", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**environ, "DATABASE_URL": f"sqlite:///{database}", **env}, timeout=120)


@pytest.fixture
def in_process(database: Path, monkeypatch: pytest.MonkeyPatch,
               capsys: pytest.CaptureFixture[str]) -> Callable[..., subprocess.CompletedProcess[str]]:
    """The same commands through `cli.main` in this process (what `python -m app.inbox.tokens` runs
    for them, as the tests above show): a process costs ~1.4 s of CPU to start and import."""
    for name in ("LOOKOUT_PUBLIC_URL", "LOOKOUT_CONSOLE_USERS"):
        monkeypatch.delenv(name, raising=False)
    engine = db.migrated_engine(f"sqlite:///{database}")  # the command's, given to it

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        try:
            status = api_cli.main(list(argv), engine)
        except SystemExit as exit_:  # argparse's refusals
            status = int(exit_.code or 0)
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(argv), status, out, err)

    return run


@pytest.fixture
def database(tmp_path: Path) -> Path:
    """A migrated SQLite file with vera (viewer) and max (maintainer)."""
    path = tmp_path / "cli.db"
    engine = db.engine(f"sqlite:///{path}")
    db.migrate(engine)
    accounts = Accounts(engine, from_env={})
    accounts.add_user("vera", "viewer", "vera-password")
    accounts.add_user("max", "maintainer", "max-password")
    return path


def engine_of(database: Path) -> sqlalchemy.Engine:
    return db.engine(f"sqlite:///{database}")


def test_api_prints_a_token_once_with_every_scope_the_role_allows(database: Path) -> None:
    made = cli(database, "api", "max", "--label", "claude code")
    assert made.returncode == 0, made.stderr
    [secret] = re.findall(r"^    ([0-9a-f]{64})$", made.stdout, re.MULTILINE)
    assert made.stdout.startswith("API token 1 for max (maintainer), shown only now (Lookout keeps its hash):\n")
    assert "Scopes: org:read project:read event:read event:write event:admin\n" in made.stdout
    assert "Send it as `Authorization: Bearer <token>`" in made.stdout
    assert f"curl -H 'Authorization: Bearer {secret}' http://localhost:3000/api/0/organizations/" in made.stdout
    caller = authenticate(engine_of(database), f"Bearer {secret}", "event:admin", ApiTokens(engine_of(database), {}))
    assert (caller.name, caller.role, caller.token_id) == ("max", "maintainer", 1)
    [row] = ApiTokens(engine_of(database), {}).list()
    assert (row.label, row.created_by) == ("claude code", "cli")


def test_api_takes_scopes_and_refuses_what_the_role_does_not_allow(
    database: Path, in_process: Callable[..., subprocess.CompletedProcess[str]]
) -> None:
    cli = lambda _, *argv: in_process(*argv)  # noqa: E731 (the same calls as through a process)
    reader = cli(database, "api", "vera", "--scope", "event:read", "--scope", "org:read")
    assert reader.returncode == 0, reader.stderr
    assert "API token 1 for vera (viewer)" in reader.stdout and "Scopes: org:read event:read\n" in reader.stdout
    [secret] = re.findall(r"^    ([0-9a-f]{64})$", reader.stdout, re.MULTILINE)
    with pytest.raises(ApiAuthError, match="lacks the project:read scope"):
        authenticate(engine_of(database), f"Bearer {secret}", "project:read", ApiTokens(engine_of(database), {}))

    writer = cli(database, "api", "vera", "--scope", "event:write")
    assert (writer.returncode, writer.stdout) == (2, "")
    assert writer.stderr == ("A viewer's token may not have event:write: the viewer role allows org:read, project:read, "
                             "event:read.\n")
    nobody = cli(database, "api", "nobody")
    assert (nobody.returncode, nobody.stdout) == (2, "")
    assert nobody.stderr.startswith("There is no console user 'nobody': `python -m app.console.accounts add NAME")
    unknown = cli(database, "api", "max", "--scope", "org:write")
    assert unknown.returncode == 2 and "invalid choice: 'org:write'" in unknown.stderr
    assert len(ApiTokens(engine_of(database), {}).list()) == 1


def test_api_list_and_api_revoke(database: Path, in_process: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    cli = lambda _, *argv: in_process(*argv)  # noqa: E731 (the same calls as through a process)
    secrets = [re.findall(r"^    ([0-9a-f]{64})$", cli(database, "api", name).stdout, re.MULTILINE)[0]
               for name in ("vera", "max")]
    Accounts(engine_of(database), from_env={}).remove_user("vera")
    revoked = cli(database, "api-revoke", "2")
    assert (revoked.returncode, revoked.stdout) == (0, "API token 2 is revoked: requests with it are refused.\n")

    listed = cli(database, "api-list")
    assert listed.returncode == 0 and not any(secret[8:16] in listed.stdout for secret in secrets)
    lines = listed.stdout.splitlines()
    assert lines[0] == "id\tuser\tscopes\tlabel\tprefix\tcreated\tcreated by\tlast used\trevoked"
    assert re.fullmatch(f"1\tvera \\(removed\\)\torg:read project:read event:read\t\t{secrets[0][:8]}…\t{WHEN}\tcli\t"
                        f"never\t{WHEN}", lines[1]), lines[1]  # revoked with its user
    assert re.fullmatch(f"2\tmax\t{' '.join(['org:read', 'project:read', 'event:read', 'event:write', 'event:admin'])}\t\t"
                        f"{secrets[1][:8]}…\t{WHEN}\tcli\tnever\t{WHEN}", lines[2]), lines[2]
    assert len(lines) == 3
    assert cli(database, "api-list", "max").stdout.splitlines()[1:] == lines[2:]

    missing = cli(database, "api-revoke", "7")
    assert (missing.returncode, missing.stderr) == (
        2, "There is no API token 7: `python -m app.inbox.tokens api-list` shows them.\n")


def test_the_upload_tokens_commands_still_answer(database: Path) -> None:
    listed = cli(database, "list")
    assert (listed.returncode, listed.stdout) == (0, "id\tproject\tlabel\tprefix\tcreated\tcreated by\tlast used\trevoked\n")
    helped = cli(database, "--help")
    assert "python -m app.inbox.tokens api --help" in helped.stdout
    api_help = cli(database, "api", "--help")
    assert api_help.returncode == 0 and "--scope {org:read,project:read,event:read,event:write,event:admin}" in api_help.stdout
