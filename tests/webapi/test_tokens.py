"""app/webapi/tokens.py and scopes.py: API tokens made, listed, revoked and found on SQLite and
PostgreSQL; a token is kept as its hash only; its scopes are at most its user's role's, and each use
gets them cut to the role the user has then; a removed user's tokens are revoked with them and find no
caller, also once a user of the same name is added (another id: never a removed user's, migration
0022), through the real web API on loopback with httpx and sentry-cli too."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import sqlalchemy
from sqlalchemy import select

from app import db
from app.console.accounts import ROLES, Accounts, hash_password
from app.protocol.bearer import TOUCH_EVERY_S
from app.sourcemaps.own_build import SENTRY_CLI
from app.webapi.scopes import SCOPES, allowed_scopes
from app.webapi.tokens import API_TOKENS, ApiCaller, ApiTokenRow, ApiTokens, scopes_for
from plugin_support.clock import Clock
from tests.factories import as_of_revision
from tests.webapi.inbox import Inbox, inbox, on_loopback, served

READ = ("org:read", "project:read", "event:read")


@pytest.fixture
def users(engine: sqlalchemy.Engine) -> Accounts:
    """Database users vera (viewer) and max (maintainer)."""
    accounts = Accounts(engine, from_env={})
    accounts.add_user("vera", "viewer", "vera-password")
    accounts.add_user("max", "maintainer", "max-password")
    return accounts


def user_id(engine: sqlalchemy.Engine, name: str) -> int:
    with engine.connect() as connection:
        return connection.execute(sqlalchemy.text("SELECT id FROM console_user WHERE name = :n"), {"n": name}).scalar_one()


def test_each_role_allows_sentry_s_scopes_a_viewer_only_the_read_ones() -> None:
    assert SCOPES == ("org:read", "project:read", "event:read", "event:write", "event:admin")
    assert allowed_scopes("viewer") == frozenset(READ)
    assert allowed_scopes("maintainer") == frozenset(SCOPES)
    assert allowed_scopes("admin") == allowed_scopes("") == frozenset()
    assert set(ROLES) == {"viewer", "maintainer"}


def test_a_token_is_made_for_a_user_with_all_their_role_allows_and_only_its_hash_is_kept(
    engine: sqlalchemy.Engine, users: Accounts
) -> None:
    tokens = ApiTokens(engine, from_env={}, clock=Clock())  # at 1000.0
    row, secret = tokens.add("max", label="  claude code  ", created_by="max")
    assert re.fullmatch("[0-9a-f]{64}", secret)
    assert row == ApiTokenRow(row.id, "max", user_id(engine, "max"), SCOPES, label="claude code", prefix=secret[:8],
                              created_at=1_000.0, created_by="max", last_used_at=None, revoked_at=None)
    viewer_row, viewer_secret = tokens.add("vera")
    assert viewer_row.scopes == READ and viewer_row.created_by == "cli" and viewer_secret != secret
    with engine.connect() as connection:
        stored = connection.execute(select(API_TOKENS).order_by(API_TOKENS.c.id)).mappings().all()
    assert [s["token_sha256"] for s in stored] == [hashlib.sha256(s.encode()).hexdigest() for s in (secret, viewer_secret)]
    assert stored[0]["scopes"] == "org:read project:read event:read event:write event:admin"
    assert all(s not in str(value) for s in (secret, viewer_secret) for token in stored for value in token.values())
    assert tokens.list() == [row, viewer_row]
    assert tokens.list("vera") == [viewer_row] and tokens.list("nobody") == []


def test_a_token_s_scopes_are_chosen_within_the_role_and_anything_else_is_refused(
    engine: sqlalchemy.Engine, users: Accounts
) -> None:
    tokens = ApiTokens(engine, from_env={})
    assert tokens.add("max", ["event:admin", "org:read", "org:read"])[0].scopes == ("org:read", "event:admin")
    assert tokens.add("vera", ("event:read",))[0].scopes == ("event:read",)
    assert tokens.add("vera", "event:read")[0].scopes == ("event:read",)  # one scope as a string
    refusals = {
        ("vera", ("event:read", "event:write")): "A viewer's token may not have event:write: the viewer role allows "
                                                 "org:read, project:read, event:read.",
        ("vera", ("event:admin", "event:write")): "A viewer's token may not have event:write, event:admin: the viewer "
                                                  "role allows org:read, project:read, event:read.",
        ("max", ("org:write",)): "There is no scope 'org:write': a token's scopes are among org:read, project:read, "
                                 "event:read, event:write, event:admin.",
        ("max", (None,)): "There is no scope 'None': a token's scopes are among org:read, project:read, event:read, "
                          "event:write, event:admin.",
        ("max", ("org:read",) * 6): "There is no scope 'more': a token's scopes are among org:read, project:read, "
                                    "event:read, event:write, event:admin.",
        ("max", ()): "A token needs at least one scope.",
        ("nobody", None): "There is no console user 'nobody': `python -m app.console.accounts add NAME --role "
                          "viewer|maintainer` adds one.",
        ("", None): "There is no console user '': `python -m app.console.accounts add NAME --role viewer|maintainer` "
                    "adds one.",
    }
    for (name, scopes), sentence in refusals.items():
        with pytest.raises(ValueError) as caught:
            tokens.add(name, scopes)  # type: ignore[arg-type]  # a caller's mistakes, on purpose
        assert str(caught.value) == sentence
    with pytest.raises(ValueError, match="one line of at most 100 characters"):
        tokens.add("max", label="two\nlines")
    assert len(tokens.list()) == 3
    with pytest.raises(ValueError, match="There is no scope 'x'"):
        scopes_for("viewer", iter(lambda: "x", None))  # an endless iterable is read bounded, then refused


def test_a_live_token_finds_its_caller_with_the_role_the_user_has_now(engine: sqlalchemy.Engine, users: Accounts) -> None:
    tokens = ApiTokens(engine, from_env={})
    row, secret = tokens.add("max")
    assert tokens.caller(secret) == ApiCaller(user_id(engine, "max"), "max", "maintainer", frozenset(SCOPES), row.id)
    users.set_role("max", "viewer")  # a maintainer made a viewer: the write scopes go at once
    assert tokens.caller(secret) == ApiCaller(user_id(engine, "max"), "max", "viewer", frozenset(READ), row.id)
    users.set_role("max", "maintainer")
    assert tokens.caller(secret) is not None and tokens.caller(secret).scopes == frozenset(SCOPES)  # type: ignore[union-attr]
    assert tokens.caller("0" * 64) is None and tokens.caller(secret.upper()) is None
    assert tokens.caller(secret[:8] + "0" * 56) is None  # the prefix shown on the console finds nothing


def test_a_removed_user_s_tokens_find_no_caller_even_once_the_name_is_added_again(
    engine: sqlalchemy.Engine, users: Accounts
) -> None:
    tokens = ApiTokens(engine, from_env={})
    row, secret = tokens.add("vera")
    users.remove_user("vera", now=1_795_000_000.0)
    assert tokens.caller(secret) is None and tokens.role_of(row) is None
    users.add_user("vera", "maintainer", "another-password")
    assert tokens.caller(secret) is None
    assert [(t.id, t.revoked_at) for t in tokens.list("vera")] == [(row.id, 1_795_000_000.0)]  # listed, for the record
    new_row, new_secret = tokens.add("vera")
    assert tokens.caller(new_secret) is not None and new_row.scopes == SCOPES


def test_removing_the_newest_user_revokes_their_tokens_and_a_new_user_of_the_name_is_another_id(
    engine: sqlalchemy.Engine, users: Accounts
) -> None:
    # max is the newest user: without AUTOINCREMENT, SQLite gave his id to the next user added
    clock = Clock()
    clock.now = 1_795_000_000.0
    tokens = ApiTokens(engine, from_env={}, clock=clock)
    (old, secret), (earlier, earlier_secret), (_, vera_secret) = tokens.add("max"), tokens.add("max"), tokens.add("vera")
    tokens.revoke(earlier.id)  # revoked before: keeps its date
    old_id = user_id(engine, "max")
    users.remove_user("max", now=1_795_086_400.0)
    users.add_user("max", "maintainer", "a-new-max-password")
    assert user_id(engine, "max") > old_id
    assert tokens.caller(secret) is None and tokens.caller(earlier_secret) is None
    assert [(t.id, t.user_id, t.revoked_at) for t in tokens.list("max")] == [
        (old.id, old_id, 1_795_086_400.0), (earlier.id, old_id, 1_795_000_000.0)]
    assert tokens.caller(vera_secret) is not None  # another user's tokens are untouched
    with engine.begin() as connection:  # were it not revoked (e.g. made while the user was being removed)
        connection.execute(API_TOKENS.update().where(API_TOKENS.c.id == old.id).values(revoked_at=None))
    assert tokens.role_of(tokens.lookup(secret)) is None and tokens.caller(secret) is None  # type: ignore[arg-type]
    new_row, new_secret = tokens.add("max")
    assert tokens.caller(new_secret) == ApiCaller(user_id(engine, "max"), "max", "maintainer", frozenset(SCOPES), new_row.id)
    users.remove_user("vera")
    users.remove_user("max")  # no user left: still no id given twice
    users.add_user("max", "viewer", "a-third-max-password")
    assert user_id(engine, "max") > new_row.user_id > old_id  # type: ignore[operator]


def old_removal(engine: sqlalchemy.Engine, name: str, again_as: int | None = None) -> None:
    """A user removed as Lookout did before 0022 (their tokens left as they were) and, with
    `again_as`, a user of the same name added again who got that id: SQLite handed a removed newest
    user's id out again; PostgreSQL does when a copy (app/copy_database.py) started its sequence past
    the highest id copied, not past a removed one."""
    with engine.begin() as connection:
        connection.execute(sqlalchemy.text("DELETE FROM console_user WHERE name = :n"), {"n": name})
    if again_as is None:
        return
    if engine.dialect.name == "sqlite":
        Accounts(engine, from_env={}).add_user(name, "maintainer", "a-new-password")
    else:
        with engine.begin() as connection:
            connection.execute(sqlalchemy.text(
                "INSERT INTO console_user (id, name, role, password_hash, created_at) VALUES (:i, :n, 'maintainer', :h, :t)"),
                {"i": again_as, "n": name, "h": hash_password("a-new-password"), "t": time.time()})
            connection.execute(sqlalchemy.text(  # as app/copy_database.py leaves it: past the highest id there
                "SELECT setval(pg_get_serial_sequence('console_user', 'id'), (SELECT MAX(id) FROM console_user))"))
    assert user_id(engine, name) == again_as


def test_migration_0022_revokes_an_older_install_s_tokens_of_removed_users_and_moves_ids_past_them(
    engine: sqlalchemy.Engine,
) -> None:
    with as_of_revision(engine, "0021_project_dev_servers"):
        accounts = Accounts(engine, from_env={})
        for name in ("vera", "kept", "max", "zed"):
            accounts.add_user(name, "maintainer", f"{name}-password")
        tokens = ApiTokens(engine, from_env={"erin": ("viewer", hash_password("erin-password"))})
        made = {name: tokens.add(name) for name in ("vera", "max", "zed", "kept", "erin")}
    ids = {name: row.user_id for name, (row, _) in made.items()}
    old_removal(engine, "zed")  # the newest user: their id, free now, would be handed out again
    old_removal(engine, "max", again_as=ids["max"])  # the newest user then: the old token came back to life
    old_removal(engine, "vera")
    assert ApiTokens(engine, from_env={}).caller(made["max"][1]) is not None  # (before 0022)
    before = time.time()
    db.migrate(engine)
    listed = {t.user_name: t for t in ApiTokens(engine, from_env={}).list()}
    assert {name for name, t in listed.items() if t.revoked_at is not None} == {"vera", "max", "zed"}
    assert all(before <= t.revoked_at for t in listed.values() if t.revoked_at is not None)  # type: ignore[operator]
    live = ApiTokens(engine, from_env={"erin": ("viewer", "x")})
    assert live.caller(made["kept"][1]) is not None and live.caller(made["erin"][1]) is not None
    assert live.caller(made["max"][1]) is None and live.caller(made["zed"][1]) is None
    accounts.add_user("zed", "viewer", "zed-password")
    assert user_id(engine, "zed") > ids["zed"]  # type: ignore[operator]  # past every id a token names
    if engine.dialect.name == "sqlite":
        with engine.connect() as connection:
            created = connection.execute(sqlalchemy.text(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'console_user'")).scalar_one()
            assert "AUTOINCREMENT" in created
            assert [r.name for r in connection.execute(sqlalchemy.text("SELECT name FROM console_user ORDER BY id"))] == [
                "kept", "max", "zed"]  # the rows kept across the copy into the new table


@pytest.fixture(scope="module")
def on_the_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inbox, str, Path]]:
    """The web API as the app serves it, on loopback, over a SQLite file; max is its newest user."""
    home = tmp_path_factory.mktemp("removed")
    found = inbox(home)
    Accounts(found.engine, from_env={}).add_user("max", "maintainer", "correct horse battery")
    for host in on_loopback(served(found.engine)):
        yield found, host, home
    found.engine.dispose()


def sentry_cli_info(host: str, home: Path, token: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "SENTRY_URL": f"http://{host}", "SENTRY_AUTH_TOKEN": token,
           "SENTRY_LOAD_DOTENV": "0", "SENTRY_DISABLE_UPDATE_CHECK": "true"}
    return subprocess.run([str(SENTRY_CLI), "info"], env=env, cwd=home, capture_output=True, text=True, timeout=60)


def test_through_the_web_api_a_removed_max_s_token_is_401_and_a_new_max_is_another_user(
    on_the_web: tuple[Inbox, str, Path],
) -> None:
    found, host, home = on_the_web
    tokens, accounts = ApiTokens(found.engine, from_env={}), Accounts(found.engine, from_env={})
    _, old = tokens.add("max")
    with httpx.Client(base_url=f"http://{host}") as client:
        def get(path: str, token: str) -> httpx.Response:
            return client.get(path, headers={"Authorization": f"Bearer {token}"})

        answer = get("/api/0/", old)
        assert answer.status_code == 200 and answer.json()["user"]["name"] == "max"
        old_id = answer.json()["user"]["id"]
        assert get("/api/0/organizations/lookout/issues/WEB-1/", old).status_code == 200
        assert sentry_cli_info(host, home, old).returncode == 0

        accounts.remove_user("max")
        accounts.add_user("max", "maintainer", "another horse battery")
        for path in ("/api/0/", "/api/0/organizations/lookout/issues/WEB-1/", "/api/0/organizations/lookout/users/"):
            refused = get(path, old)
            assert refused.status_code == 401 and "user no longer exists" in refused.json()["detail"], path
        assert client.put("/api/0/organizations/lookout/issues/WEB-1/", json={"status": "resolved"},
                          headers={"Authorization": f"Bearer {old}"}).status_code == 401
        done = sentry_cli_info(host, home, old)
        assert done.returncode != 0 and "401" in done.stderr, done.stderr

        _, new = tokens.add("max")
        answer = get("/api/0/", new)
        assert answer.status_code == 200 and answer.json()["user"]["name"] == "max"
        assert answer.json()["user"]["id"] != old_id  # the new max is another user, as the API shows it
        users = {u["name"]: u["id"] for u in get("/api/0/organizations/lookout/users/", new).json()}
        assert users["max"] == answer.json()["user"]["id"] and old_id not in users.values()
        done = sentry_cli_info(host, home, new)
        assert done.returncode == 0 and "max" in done.stdout, done.stderr
    assert user_id(found.engine, "max") != int(old_id)


def test_a_user_of_the_environment_has_tokens_while_their_entry_is_there(engine: sqlalchemy.Engine) -> None:
    entry = {"erin": ("viewer", hash_password("erin-password"))}
    row, secret = ApiTokens(engine, from_env=entry).add("erin")
    assert (row.user_id, row.scopes) == (None, READ)
    assert ApiTokens(engine, from_env=entry).caller(secret) == ApiCaller(None, "erin", "viewer", frozenset(READ), row.id)
    assert ApiTokens(engine, from_env={"erin": ("maintainer", "x")}).caller(secret).role == "maintainer"  # type: ignore[union-attr]
    assert ApiTokens(engine, from_env={}).caller(secret) is None


def test_revoking_keeps_the_first_date_and_a_user_revokes_only_their_own(engine: sqlalchemy.Engine, users: Accounts) -> None:
    clock = Clock()
    clock.now = 1_795_000_000.0
    tokens = ApiTokens(engine, from_env={}, clock=clock)
    (mine, secret), (theirs, their_secret) = tokens.add("vera"), tokens.add("max")
    assert tokens.revoke(theirs.id, by_user="vera") is False
    assert tokens.caller(their_secret) is not None
    assert tokens.revoke(mine.id, by_user="vera") is True and tokens.caller(secret) is None
    clock.now += 86_400
    assert tokens.revoke(mine.id) is True  # again, by anyone: the first date stays
    assert tokens.revoke(theirs.id + 1) is False and tokens.revoke(-1) is False
    assert [(t.id, t.revoked_at) for t in tokens.list()] == [(mine.id, 1_795_000_000.0), (theirs.id, None)]
    assert tokens.lookup(secret) is not None  # a revoked token is still found, to say it was revoked


def test_last_used_is_written_at_most_once_a_minute(engine: sqlalchemy.Engine, users: Accounts) -> None:
    clock = Clock()
    clock.now = 5_000.0
    tokens = ApiTokens(engine, from_env={}, clock=clock)
    row, secret = tokens.add("vera")
    tokens.caller(secret)
    for now in (5_001.0, 5_000.0 + TOUCH_EVERY_S - 1):
        clock.now = now
        tokens.caller(secret)
        assert [t.last_used_at for t in tokens.list()] == [5_000.0]
    clock.now = 5_000.0 + TOUCH_EVERY_S
    tokens.caller(secret)
    tokens.caller("0" * 64)
    assert [t.last_used_at for t in tokens.list()] == [clock.now]
