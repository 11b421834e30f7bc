"""Console accounts on a real database: hashed passwords, users from the CLI and the environment,
sessions that expire, and no default user; removing a user ends their sessions and revokes their API
tokens in one transaction, and a removed user's id is never given to another."""

from __future__ import annotations

import hashlib
import io
import sys

import pytest
import sqlalchemy
from sqlalchemy.schema import CreateTable

from app.console import accounts as module
from app.console.accounts import USERS, AccountError, Accounts, Viewer, env_users, hash_password, verify_password
from app.webapi.tokens import ApiTokens


def test_passwords_are_hashed_with_a_salt_and_verified() -> None:
    first, second = hash_password("correct horse"), hash_password("correct horse")
    assert first != second and first.startswith("scrypt$") and "correct horse" not in first
    assert verify_password("correct horse", first) and not verify_password("wrong horse", first)
    assert not verify_password("x", "not a hash")


def test_users_from_the_database_and_the_environment(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine, from_env=env_users({"LOOKOUT_CONSOLE_USERS": f"bob:viewer:{hash_password('bob-secret')}"}))
    assert accounts.authenticate("alice", "anything at all") is None  # nobody exists by default
    accounts.add_user("alice", "maintainer", "alice-secret")
    assert accounts.authenticate("alice", "alice-secret") == Viewer("alice", "maintainer")
    assert accounts.authenticate("alice", "alice-wrong") is None
    assert accounts.authenticate("bob", "bob-secret") == Viewer("bob", "viewer")
    assert not Viewer("bob", "viewer").may_change and Viewer("alice", "maintainer").may_change
    with engine.connect() as connection:
        [stored] = connection.exec_driver_sql("select password_hash from console_user").scalars()
    assert stored.startswith("scrypt$") and "alice-secret" not in stored


@pytest.mark.parametrize(("name", "role", "password", "complaint"), [
    ("carol", "admin", "long enough", "role must be one of viewer, maintainer"),
    ("carol", "viewer", "short", "at least 8 characters"),
    ("ca:rol", "viewer", "long enough", "must not be empty, contain"),
    ("c" * 129, "viewer", "long enough", "or be over 128 characters"),
])
def test_bad_users_are_refused(engine: sqlalchemy.Engine, name: str, role: str, password: str, complaint: str) -> None:
    with pytest.raises(AccountError, match=complaint):
        Accounts(engine, from_env={}).add_user(name, role, password)


def test_a_bad_environment_entry_is_named() -> None:
    with pytest.raises(AccountError, match="entry 'dave' must be name:role:hash"):
        env_users({"LOOKOUT_CONSOLE_USERS": "dave:maintainer:plaintext"})


def test_sessions_last_a_week_and_end_on_sign_out(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine, from_env={})
    accounts.add_user("alice", "viewer", "alice-secret")
    token = accounts.start_session(Viewer("alice", "viewer"), now=1000.0)
    assert accounts.session(token, now=2000.0) == Viewer("alice", "viewer")
    assert accounts.session(token, now=1000.0 + module.SESSION_S + 1) is None
    assert accounts.session("forged", now=2000.0) is None and accounts.session("", now=2000.0) is None
    accounts.end_session(token)
    assert accounts.session(token, now=2000.0) is None
    with engine.connect() as connection:
        assert token not in str(list(connection.exec_driver_sql("select * from console_session")))


def test_the_cli_adds_a_user_with_the_password_from_stdin(engine: sqlalchemy.Engine, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("erin-secret\n"))
    assert module.main(["add", "erin", "--role", "maintainer"], engine) == 0
    assert Accounts(engine, from_env={}).authenticate("erin", "erin-secret") == Viewer("erin", "maintainer")
    monkeypatch.setattr(sys, "stdin", io.StringIO("erin-secret\n"))
    assert module.main(["add", "erin"], engine) == 2  # already there


def test_failed_sign_ins_are_throttled_per_name_and_address_until_the_window_passes() -> None:
    now = [1000.0]
    throttle = module.Throttle(limit=3, window_s=60.0, clock=lambda: now[0])
    for _ in range(3):
        assert throttle.wait_s("name:ann", "address:10.0.0.9") == 0
        throttle.failed("name:ann", "address:10.0.0.9")
        now[0] += 10
    assert throttle.wait_s("name:ann") == pytest.approx(30.0)  # the first failure is 30 s from leaving the window
    assert throttle.wait_s("name:bob", "address:10.0.0.9") == pytest.approx(30.0)  # the address too
    assert throttle.wait_s("name:bob", "address:10.0.0.7") == 0
    now[0] += 30
    assert throttle.wait_s("name:ann", "address:10.0.0.9") == 0  # one failure left the window
    throttle.failed("name:ann")
    assert throttle.wait_s("name:ann") > 0
    throttle.succeeded("name:ann")
    assert throttle.wait_s("name:ann") == 0


def test_the_cli_changes_a_role_and_removes_a_user(engine: sqlalchemy.Engine, monkeypatch, capsys) -> None:
    accounts = Accounts(engine, from_env={})
    accounts.add_user("erin", "maintainer", "erin-secret")
    token = accounts.start_session(Viewer("erin", "maintainer"))
    assert module.main(["role", "erin", "--role", "viewer"], engine) == 0
    assert accounts.session(token) is None  # signed out: the next sign-in has the new role
    assert accounts.authenticate("erin", "erin-secret") == Viewer("erin", "viewer")
    _, api_token = ApiTokens(engine, from_env={}).add("erin")
    capsys.readouterr()
    assert module.main(["remove", "erin"], engine) == 0 and accounts.authenticate("erin", "erin-secret") is None
    assert capsys.readouterr().out == "removed erin; their sessions have ended and their API tokens are revoked\n"
    assert ApiTokens(engine, from_env={}).lookup(api_token).revoked_at is not None  # type: ignore[union-attr]
    assert module.main(["remove", "erin"], engine) == 2 and "no user 'erin' in the database" in capsys.readouterr().err


def test_a_removed_or_demoted_users_sessions_end_at_once(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine, from_env={})
    accounts.add_user("alice", "maintainer", "alice-secret")
    accounts.add_user("bob", "maintainer", "bob-secret")
    first, second = (accounts.start_session(Viewer("alice", "maintainer")) for _ in range(2))
    with engine.begin() as connection:  # a role changed in the database by other means
        connection.exec_driver_sql("update console_user set role = 'viewer' where name = 'alice'")
    assert accounts.session(first) == Viewer("alice", "viewer")  # the role it has now, not the one it signed in with
    accounts.set_role("alice", "maintainer")
    assert accounts.session(first) is None and accounts.session(second) is None
    kept = accounts.start_session(Viewer("bob", "maintainer"))
    accounts.remove_user("bob")
    assert accounts.session(kept) is None
    with pytest.raises(AccountError, match="no user 'bob'"):
        accounts.set_role("bob", "viewer")


def test_removing_a_user_revokes_their_api_tokens_in_the_same_transaction(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine, from_env={})
    accounts.add_user("alice", "maintainer", "alice-secret")
    accounts.add_user("bob", "viewer", "bob-secret")
    tokens = ApiTokens(engine, from_env={})
    (_, alice_token), (_, bob_token) = tokens.add("alice"), tokens.add("bob")
    session = accounts.start_session(Viewer("alice", "maintainer"))

    def refuse_the_revocation(_conn, _cursor, statement: str, *_args: object) -> None:
        if statement.lstrip().upper().startswith("UPDATE API_TOKEN"):
            raise RuntimeError("the database failed while revoking")

    sqlalchemy.event.listen(engine, "before_cursor_execute", refuse_the_revocation)
    try:
        with pytest.raises(RuntimeError, match="failed while revoking"):
            accounts.remove_user("alice")
    finally:
        sqlalchemy.event.remove(engine, "before_cursor_execute", refuse_the_revocation)
    # all or nothing: alice is still there, signed in, and her token still works
    assert accounts.authenticate("alice", "alice-secret") == Viewer("alice", "maintainer")
    assert accounts.session(session) == Viewer("alice", "maintainer") and tokens.caller(alice_token) is not None

    accounts.remove_user("alice", now=1_795_000_000.0)
    assert accounts.session(session) is None and tokens.caller(alice_token) is None
    assert [(t.user_name, t.revoked_at) for t in tokens.list()] == [("alice", 1_795_000_000.0), ("bob", None)]
    assert tokens.caller(bob_token) is not None


def test_a_removed_users_id_is_never_given_to_another(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine, from_env={})

    def id_of(name: str) -> int:
        with engine.connect() as connection:
            return connection.execute(sqlalchemy.select(USERS.c.id).where(USERS.c.name == name)).scalar_one()

    accounts.add_user("alice", "viewer", "alice-secret")
    accounts.add_user("max", "maintainer", "max-secret")
    seen = {id_of("alice"), id_of("max")}
    for _ in range(3):  # the newest user removed and added again: a new id each time
        accounts.remove_user("max")
        accounts.add_user("max", "maintainer", "max-secret")
        assert id_of("max") not in seen and id_of("max") > max(seen)
        seen.add(id_of("max"))
    accounts.remove_user("max")
    accounts.remove_user("alice")  # nobody left
    accounts.add_user("alice", "viewer", "alice-secret")
    assert id_of("alice") > max(seen)
    if engine.dialect.name == "sqlite":  # the migrations (0022) and the model agree: AUTOINCREMENT
        with engine.connect() as connection:
            migrated = connection.execute(sqlalchemy.text(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'console_user'")).scalar_one()
        assert "id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT" in migrated
        assert "id INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT" in str(CreateTable(USERS).compile(dialect=engine.dialect))


def test_users_of_the_environment_keep_their_sessions_only_while_listed_there(engine: sqlalchemy.Engine) -> None:
    listed = env_users({"LOOKOUT_CONSOLE_USERS": f"carol:maintainer:{hash_password('carol-secret')}"})
    token = Accounts(engine, from_env=listed).start_session(Viewer("carol", "maintainer"))
    assert Accounts(engine, from_env=listed).session(token) == Viewer("carol", "maintainer")
    demoted = {"carol": ("viewer", listed["carol"][1])}
    assert Accounts(engine, from_env=demoted).session(token) == Viewer("carol", "viewer")  # after a restart
    assert Accounts(engine, from_env={}).session(token) is None  # taken out of LOOKOUT_CONSOLE_USERS


def test_an_unknown_name_costs_one_scrypt_run_with_the_same_parameters_as_a_known_one(
    engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch,
) -> None:
    accounts = Accounts(engine, from_env=env_users({"LOOKOUT_CONSOLE_USERS": f"bob:viewer:{hash_password('bob-secret')}"}))
    accounts.add_user("alice", "viewer", "alice-secret")
    runs: list[tuple[int, int, int, int]] = []
    real = hashlib.scrypt

    def counted(password: bytes, *, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
        runs.append((n, r, p, dklen))
        return real(password, salt=salt, n=n, r=r, p=p, dklen=dklen)

    monkeypatch.setattr(hashlib, "scrypt", counted)
    costs = {}
    for name in ("alice", "bob", "nobody", "x" * 4000):
        runs.clear()
        assert accounts.authenticate(name, "a wrong password") is None
        costs[name] = list(runs)
    assert costs["alice"] == [(2**14, 8, 1, 32)]
    assert costs["bob"] == costs["nobody"] == costs["x" * 4000] == costs["alice"]


def test_the_throttle_remembers_a_bounded_number_of_names_and_addresses() -> None:
    throttle = module.Throttle()
    for i in range(100_000):  # an attacker's distinct names, from distinct addresses
        throttle.failed(f"name:user{i}", f"address:10.{i >> 16}.{(i >> 8) & 255}.{i & 255}")
    assert 0 < len(throttle) <= throttle.max_keys
    for _ in range(5):
        throttle.failed("name:alice")
    assert throttle.wait_s("name:alice") > 0  # the newest are the ones kept


def test_the_old_module_path_runs_the_same_cli() -> None:
    """`python -m app.inbox.accounts` (the path before the move) answers as app.console.accounts does."""
    import subprocess
    from pathlib import Path

    def run(module: str, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", module, *argv], cwd=Path(__file__).resolve().parents[2],
                              input=stdin, capture_output=True, text=True, timeout=120)

    for argv in (["--help"], [], ["role", "erin"]):
        old, new = run("app.inbox.accounts", *argv), run("app.console.accounts", *argv)
        assert (old.returncode, old.stdout, old.stderr) == (new.returncode, new.stdout, new.stderr)
    hashed = run("app.inbox.accounts", "hash", stdin="erin-secret\n")  # salted: the same password, another hash
    assert hashed.returncode == 0 and verify_password("erin-secret", hashed.stdout.strip())
