"""app/sourcemaps/tokens.py: upload tokens made, listed, revoked and checked on SQLite and PostgreSQL; a
token is kept as its hash only; the Authorization header is read bounded and each refusal is a
sentence; the CLI, run as a process on a real SQLite file, prints a token once with its settings."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import select

from app import db
from app.projects.registry import Projects
from app.sourcemaps.tables import TOKENS
from app.sourcemaps.tokens import MAX_HEADER_CHARS, TOUCH_EVERY_S, TokenRefused, TokenRow, Tokens, project_id_of

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def projects(engine: sqlalchemy.Engine) -> list[int]:
    """Projects 1 "Lookout" and 2 "Billing"."""
    Projects(engine).local_dsn()
    return [1, Projects(engine).add("Billing").id]


def refused(tokens: Tokens, authorization: str | None) -> TokenRefused:
    with pytest.raises(TokenRefused) as caught:
        tokens.check(authorization)
    assert caught.value.status == 401 and str(caught.value) == caught.value.sentence
    return caught.value


def test_a_token_is_made_for_a_project_and_only_its_hash_is_kept(engine: sqlalchemy.Engine, projects: list[int]) -> None:
    tokens = Tokens(engine, Clock(1_000.0))
    row, secret = tokens.add(2, "  billing-web CI  ", created_by="max")
    assert re.fullmatch("[0-9a-f]{64}", secret)
    assert row == TokenRow(row.id, 2, label="billing-web CI", prefix=secret[:8], created_at=1_000.0, created_by="max",
                           last_used_at=None, revoked_at=None)
    assert tokens.add(2)[1] != secret
    with engine.connect() as connection:
        stored = connection.execute(select(TOKENS)).mappings().all()
    assert stored[0]["token_sha256"] == hashlib.sha256(secret.encode()).hexdigest()
    assert all(secret not in str(value) for token in stored for value in token.values())
    assert tokens.check(f"Bearer {secret}").id == row.id
    assert [(t.id, t.project_id, t.created_by) for t in tokens.list()] == [(row.id, 2, "max"), (row.id + 1, 2, "cli")]
    assert tokens.list(project_id=1) == [] and len(tokens.list(project_id=2)) == 2


def test_a_token_for_no_project_or_with_a_bad_label_is_refused_with_a_sentence(
    engine: sqlalchemy.Engine, projects: list[int]
) -> None:
    tokens = Tokens(engine)
    with pytest.raises(ValueError, match=r"^There is no project 9: `python -m app.projects.registry list` shows them\.$"):
        tokens.add(9)
    for label in ("x" * 101, "two\nlines"):
        with pytest.raises(ValueError, match="one line of at most 100 characters"):
            tokens.add(1, label)
    assert tokens.list() == []


def test_the_scheme_is_case_insensitive_and_the_header_may_be_padded(engine: sqlalchemy.Engine, projects: list[int]) -> None:
    tokens = Tokens(engine)
    row, secret = tokens.add(1)
    for header in (f"Bearer {secret}", f"bearer {secret}", f"BEARER {secret}", f"  Bearer   {secret}  ", f"Bearer\t{secret}",
                   f"Bearer {secret}".ljust(MAX_HEADER_CHARS)):
        assert tokens.check(header).id == row.id, header


def test_each_refusal_says_what_is_wrong(engine: sqlalchemy.Engine, projects: list[int]) -> None:
    tokens = Tokens(engine)
    _, secret = tokens.add(1)
    for missing in (None, "", "   ", "Bearer", "Bearer   "):
        assert refused(tokens, missing).sentence.startswith("No upload token: send `Authorization: Bearer <token>`")
    assert refused(tokens, f"Basic {secret}").sentence == (
        "Upload tokens are sent as `Authorization: Bearer <token>`, not with the 'Basic' scheme.")
    assert "'Token'" in refused(tokens, f"Token {secret}").sentence
    assert "'xxxxxxxxxxxxxxxxxxxx'" in refused(tokens, "x" * 150).sentence  # the scheme shown is cut short
    for unknown in (f"Bearer {'0' * 64}", f"Bearer {secret.upper()}", f"Bearer {secret[:-1]}",
                    f"Bearer {secret} {secret}", "Bearer lookout-test-token-abc", f"Bearer sntrys_{secret}"):
        assert refused(tokens, unknown).sentence.startswith("This upload token is not known to this Lookout;"), unknown


def test_a_forged_token_keeping_a_real_token_s_prefix_is_refused(engine: sqlalchemy.Engine, projects: list[int]) -> None:
    # The prefix is shown on the console and printed by `list`: it must find nothing by itself.
    tokens = Tokens(engine)
    row, secret = tokens.add(2)
    for tail in ("0" * 56, secret[8:][::-1], "f" * 56):
        forged = secret[:8] + tail
        assert forged != secret
        assert refused(tokens, f"Bearer {forged}").sentence.startswith("This upload token is not known"), forged
    assert tokens.check(f"Bearer {secret}").id == row.id


def test_the_header_is_read_bounded(engine: sqlalchemy.Engine, projects: list[int]) -> None:
    tokens = Tokens(engine)
    _, secret = tokens.add(1)
    for header in (f"Bearer {secret}".ljust(MAX_HEADER_CHARS + 1), f"Bearer {secret}" + " " * 10_000_000,
                   "Bearer " + "a" * 10_000_000):
        assert refused(tokens, header).sentence == (
            "The Authorization header is over 200 characters: an upload token is sent as `Bearer ` and its "
            "64 hex digits.")


def test_a_revoked_token_is_refused_with_its_date_and_the_others_still_work(
    engine: sqlalchemy.Engine, projects: list[int]
) -> None:
    clock = Clock(1_795_000_000.0)  # 2026-11-18 11:06:40 UTC
    tokens = Tokens(engine, clock)
    (row, secret), (other, other_secret) = tokens.add(1, "old"), tokens.add(2, "new")
    assert tokens.revoke(row.id) is True
    clock.now += 86_400
    assert tokens.revoke(row.id) is True  # again: it keeps the first date
    assert tokens.revoke(other.id + 1) is False and tokens.revoke(-1) is False
    assert refused(tokens, f"Bearer {secret}").sentence == (
        "This upload token was revoked on 2026-11-18 11:06 UTC; a maintainer makes one with "
        "`python -m app.sourcemaps.tokens add PROJECT` or on the console's Tokens page.")
    assert tokens.check(f"Bearer {other_secret}").id == other.id
    assert [(t.id, t.revoked_at) for t in tokens.list()] == [(row.id, 1_795_000_000.0), (other.id, None)]


def last_used(engine: sqlalchemy.Engine, token_id: int) -> float | None:
    with engine.connect() as connection:
        return connection.execute(select(TOKENS.c.last_used_at).where(TOKENS.c.id == token_id)).scalar_one()


def test_last_used_is_written_at_most_once_a_minute(engine: sqlalchemy.Engine, projects: list[int]) -> None:
    clock = Clock(5_000.0)
    tokens = Tokens(engine, clock)
    row, secret = tokens.add(1)
    assert last_used(engine, row.id) is None
    assert tokens.check(f"Bearer {secret}").last_used_at == 5_000.0
    for now in (5_001.0, 5_000.0 + TOUCH_EVERY_S - 1):
        clock.now = now
        assert tokens.check(f"Bearer {secret}").last_used_at == 5_000.0
        assert last_used(engine, row.id) == 5_000.0
    clock.now = 5_000.0 + TOUCH_EVERY_S
    assert tokens.check(f"Bearer {secret}").last_used_at == clock.now == last_used(engine, row.id)
    with pytest.raises(TokenRefused):
        tokens.check("Bearer " + "0" * 64)  # a refused token marks nothing
    assert [t.last_used_at for t in tokens.list()] == [clock.now]


def test_a_project_is_named_by_its_id_or_its_exact_name(engine: sqlalchemy.Engine, projects: list[int]) -> None:
    Projects(engine).add("Twin")
    Projects(engine).add("Twin")
    assert [project_id_of(engine, text) for text in ("1", " 2 ", "Lookout", "Billing")] == [1, 2, 1, 2]
    for text, sentence in (("Twin", "Several projects are named 'Twin' (3, 4): give its id."),
                           ("billing", "There is no project 'billing': `python -m app.projects.registry list` shows them."),
                           ("9", "There is no project '9': `python -m app.projects.registry list` shows them.")):
        with pytest.raises(ValueError) as caught:
            project_id_of(engine, text)
        assert str(caught.value) == sentence


def cli(database: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("LOOKOUT_PUBLIC_URL", "DATABASE_URL")}
    return subprocess.run([sys.executable, "-m", "app.sourcemaps.tokens", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**environ, "DATABASE_URL": f"sqlite:///{database}", **env}, timeout=120)


def test_the_cli_makes_lists_and_revokes_tokens(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    engine = db.engine(f"sqlite:///{database}")
    db.migrate(engine)
    Projects(engine).local_dsn()
    Projects(engine).add("Billing service")

    made = cli(database, "add", "Billing service", "--label", "billing-web CI")
    assert made.returncode == 0, made.stderr
    [secret] = re.findall(r"^    ([0-9a-f]{64})$", made.stdout, re.MULTILINE)
    assert (f"SENTRY_URL=http://localhost:3000\nSENTRY_ORG=lookout\nSENTRY_PROJECT=2\nSENTRY_AUTH_TOKEN={secret}\n"
            in made.stdout)
    [row] = Tokens(engine).list()
    assert (row.project_id, row.label, row.created_by) == (2, "billing-web CI", "cli")
    assert Tokens(engine).check(f"Bearer {secret}").id == row.id

    by_id = cli(database, "add", "1", LOOKOUT_PUBLIC_URL="https://lookout.example.com/")
    assert by_id.returncode == 0, by_id.stderr
    assert "SENTRY_URL=https://lookout.example.com\nSENTRY_ORG=lookout\nSENTRY_PROJECT=1\n" in by_id.stdout

    listed = cli(database, "list")
    assert listed.returncode == 0 and secret not in listed.stdout
    lines = listed.stdout.splitlines()
    assert lines[0] == "id\tproject\tlabel\tprefix\tcreated\tcreated by\tlast used\trevoked"
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"  # last used: by the check above
    assert re.fullmatch(f"{row.id}\t2\tbilling-web CI\t{secret[:8]}…\t{when}\tcli\t{when}\t", lines[1]), lines[1]
    assert re.fullmatch(f"{row.id + 1}\t1\t\t[0-9a-f]{{8}}…\t{when}\tcli\tnever\t", lines[2]), lines[2]

    revoked = cli(database, "revoke", str(row.id))
    assert (revoked.returncode, revoked.stdout) == (0, f"Upload token {row.id} is revoked: uploads with it are refused.\n")
    with pytest.raises(TokenRefused, match="was revoked on"):
        Tokens(engine).check(f"Bearer {secret}")


def test_the_cli_names_what_it_cannot_find(tmp_path: Path) -> None:
    database = tmp_path / "cli.db"
    engine = db.engine(f"sqlite:///{database}")
    db.migrate(engine)
    Projects(engine).local_dsn()
    unknown = cli(database, "add", "Nowhere")
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert unknown.stderr == "There is no project 'Nowhere': `python -m app.projects.registry list` shows them.\n"
    no_token = cli(database, "revoke", "7")
    assert (no_token.returncode, no_token.stderr) == (
        2, "There is no upload token 7: `python -m app.sourcemaps.tokens list` shows them.\n")
    assert Tokens(engine).list() == []


@pytest.mark.parametrize("argv", [["--help"], [], ["revoke"]])
def test_the_old_module_path_runs_the_same_cli(argv: list[str]) -> None:
    """`python -m app.inbox.tokens` (the path before the move) answers as app.sourcemaps.tokens does."""
    def run(module: str) -> tuple[int, str, str]:
        done = subprocess.run([sys.executable, "-m", module, *argv], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        return done.returncode, done.stdout, done.stderr

    assert run("app.inbox.tokens") == run("app.sourcemaps.tokens")
