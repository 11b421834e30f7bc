"""The pinned sentry-cli's `issues` commands (list, with --query; resolve, mute — a resolved issue too —,
unresolve) and `info` against a Lookout on loopback whose issues the real sentry-sdk made, pointed at it
with SENTRY_URL and SENTRY_AUTH_TOKEN as docs/web-api.md says; each change is checked in the database."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from app.sourcemaps.own_build import SENTRY_CLI
from tests.webapi.inbox import Inbox, inbox, on_loopback, served


@pytest.fixture(scope="module")
def lookout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inbox, str, Path]]:
    home = tmp_path_factory.mktemp("cli")
    found = inbox(home)
    for host in on_loopback(served(found.engine)):
        yield found, host, home
    found.engine.dispose()


def cli(lookout: tuple[Inbox, str, Path], *args: str, token: str = "ada") -> subprocess.CompletedProcess[str]:
    found, host, home = lookout
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "SENTRY_URL": f"http://{host}",
           "SENTRY_AUTH_TOKEN": found.tokens[token], "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "true"}
    return subprocess.run([str(SENTRY_CLI), *args], env=env, cwd=home, capture_output=True, text=True, timeout=60)


def status(found: Inbox, value: str) -> str:
    with found.engine.connect() as connection:
        return str(connection.execute(sqlalchemy.text("SELECT status FROM inbox_issue WHERE id = :i"),
                                      {"i": found.issues[value]}).scalar_one())


def test_info_names_the_tokens_user(lookout: tuple[Inbox, str, Path]) -> None:
    done = cli(lookout, "info")
    assert done.returncode == 0, done.stderr
    assert "ada" in done.stdout and "event:write" in done.stdout


def test_issues_list_with_and_without_a_query(lookout: tuple[Inbox, str, Path]) -> None:
    listed = cli(lookout, "issues", "list", "-o", "lookout", "-p", "web")
    assert listed.returncode == 0, listed.stderr
    assert all(short in listed.stdout for short in ("WEB-1", "WEB-2", "WEB-3")), listed.stdout
    queried = cli(lookout, "issues", "list", "-o", "lookout", "-p", "web", "--query", "missing-cart")
    assert queried.returncode == 0, queried.stderr
    assert "WEB-2" in queried.stdout and "WEB-1" not in queried.stdout, queried.stdout


def test_resolve_mute_and_unresolve(lookout: tuple[Inbox, str, Path]) -> None:
    found, _host, _home = lookout
    issue = str(found.issues["missing-user"])
    for command, expected in (("resolve", "resolved"), ("unresolve", "unresolved"), ("mute", "ignored")):
        done = cli(lookout, "issues", command, "-o", "lookout", "-p", "web", "-i", issue)
        assert done.returncode == 0, done.stderr
        assert status(found, "missing-user") == expected


def test_mute_ignores_a_resolved_issue_as_sentry_does(lookout: tuple[Inbox, str, Path]) -> None:
    found, _host, _home = lookout
    issue = str(found.issues["division by zero"])
    for command, expected in (("resolve", "resolved"), ("mute", "ignored")):
        done = cli(lookout, "issues", command, "-o", "lookout", "-p", "web", "-i", issue)
        assert done.returncode == 0, done.stderr
        assert status(found, "division by zero") == expected, (command, done.stdout)


def test_a_read_only_token_is_refused_with_a_sentence(lookout: tuple[Inbox, str, Path]) -> None:
    found, _host, _home = lookout
    done = cli(lookout, "issues", "resolve", "-o", "lookout", "-p", "web", "-i", str(found.issues["missing-cart"]),
               token="ada-read")
    assert done.returncode != 0
    assert "event:write" in done.stderr and "(http status: 403)" in done.stderr
    assert status(found, "missing-cart") == "unresolved"


def test_an_unknown_project_is_404_as_sentry_cli_says_it(lookout: tuple[Inbox, str, Path]) -> None:
    done = cli(lookout, "issues", "list", "-o", "lookout", "-p", "nope")
    assert done.returncode != 0 and "Project not found" in done.stderr
