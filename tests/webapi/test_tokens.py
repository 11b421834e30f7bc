"""app/webapi/tokens.py and scopes.py: API tokens made, listed, revoked and found on SQLite and
PostgreSQL; a token is kept as its hash only; its scopes are at most its user's role's, and each use
gets them cut to the role the user has then; a removed user's tokens find no caller."""

from __future__ import annotations

import hashlib
import re

import pytest
import sqlalchemy
from sqlalchemy import select

from app.console.accounts import ROLES, Accounts, hash_password
from app.protocol.bearer import TOUCH_EVERY_S
from app.webapi.scopes import SCOPES, allowed_scopes
from app.webapi.tokens import API_TOKENS, ApiCaller, ApiTokenRow, ApiTokens, scopes_for
from tests.factories import Clock

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
    users.remove_user("vera")
    assert tokens.caller(secret) is None and tokens.role_of(row) is None
    users.add_user("vera", "maintainer", "another-password")
    assert tokens.caller(secret) is None
    assert [t.id for t in tokens.list("vera")] == [row.id]  # still listed, for the record
    new_row, new_secret = tokens.add("vera")
    assert tokens.caller(new_secret) is not None and new_row.scopes == SCOPES


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
