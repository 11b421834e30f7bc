"""Console accounts on a real database: hashed passwords, users from the CLI and the environment,
sessions that expire, and no default user."""

from __future__ import annotations

import io
import sys

import pytest
import sqlalchemy

from app.inbox import accounts as module
from app.inbox.accounts import AccountError, Accounts, Viewer, env_users, hash_password, verify_password


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
    ("ca:rol", "viewer", "long enough", "must not be empty or contain"),
])
def test_bad_users_are_refused(engine: sqlalchemy.Engine, name: str, role: str, password: str, complaint: str) -> None:
    with pytest.raises(AccountError, match=complaint):
        Accounts(engine, from_env={}).add_user(name, role, password)


def test_a_bad_environment_entry_is_named() -> None:
    with pytest.raises(AccountError, match="entry 'dave' must be name:role:hash"):
        env_users({"LOOKOUT_CONSOLE_USERS": "dave:maintainer:plaintext"})


def test_sessions_last_a_week_and_end_on_sign_out(engine: sqlalchemy.Engine) -> None:
    accounts = Accounts(engine, from_env={})
    token = accounts.start_session(Viewer("alice", "viewer"), now=1000.0)
    assert accounts.session(token, now=2000.0) == Viewer("alice", "viewer")
    assert accounts.session(token, now=1000.0 + module.SESSION_S + 1) is None
    assert accounts.session("forged", now=2000.0) is None and accounts.session("", now=2000.0) is None
    accounts.end_session(token)
    assert accounts.session(token, now=2000.0) is None
    with engine.connect() as connection:
        assert token not in str(list(connection.exec_driver_sql("select * from console_session")))


def test_the_cli_adds_a_user_with_the_password_from_stdin(engine: sqlalchemy.Engine, monkeypatch) -> None:  # noqa: ANN001
    from app import db

    monkeypatch.setattr(db, "engine", lambda url=None: engine)
    monkeypatch.setattr(sys, "stdin", io.StringIO("erin-secret\n"))
    assert module.main(["add", "erin", "--role", "maintainer"]) == 0
    assert Accounts(engine, from_env={}).authenticate("erin", "erin-secret") == Viewer("erin", "maintainer")
    monkeypatch.setattr(sys, "stdin", io.StringIO("erin-secret\n"))
    assert module.main(["add", "erin"]) == 2  # already there


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


@pytest.mark.parametrize(("peer", "forwarded_for", "local"), [
    ("127.0.0.1", "", True),
    ("::1", "", True),
    ("::ffff:127.0.0.1", "", True),  # an IPv4 client as Node's proxies name it
    ("127.0.0.1", "::ffff:127.0.0.1", True),  # the dev server's proxy, for a browser on this machine
    ("127.0.0.1", "::ffff:192.0.2.7", False),  # ... and for one elsewhere
    ("127.0.0.1", "203.0.113.9, 127.0.0.1", False),
    ("203.0.113.9", "127.0.0.1", False),  # the header can only take trust away
    ("::ffff:203.0.113.9", "", False),
    ("not an address", "", False),
])
def test_which_requests_come_from_this_machine(peer: str, forwarded_for: str, local: bool) -> None:
    assert module.from_this_machine(peer, forwarded_for) is local
