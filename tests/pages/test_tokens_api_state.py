"""The /tokens page's API tokens section as any websocket client could call its handlers, on a real
SQLite file: a client elsewhere is refused; a signed-in user makes tokens for themself within their
role's scopes, sees each secret once (never in the state files) and revokes only their own; a
maintainer and this machine list and revoke anyone's; this machine with no user signed in makes
none and is told how; hostile arguments get a sentence or are ignored, never a crash."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from app.console import form_state, state as console
from app.console.state import REFUSED
from app.pages.tokens_api_state import NO_TOKEN, NOT_SIGNED_IN, ApiTokensState
from app.webapi.auth import authenticate
from app.webapi.scopes import SCOPES
from app.webapi.tokens import ApiTokens
from tests.console import clients
from tests.console.clients import LOOPBACK, STRANGER, call, console_database, persisted, shown, signed_in, with_users

READ = ["org:read", "project:read", "event:read"]
HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 0, 2**70, 3.5, [1], {"id": 1}, "event:write", "org:read"]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """A viewer vera and a maintainer max, each with one API token (1: vera's, 2: max's); the page
    reads through `db.engine()`."""
    for eng in console_database(tmp_path, monkeypatch):
        with_users(eng, monkeypatch)
        for name in ("vera", "max"):
            ApiTokens(eng, from_env={}).add(name, label=f"{name}'s script")
        yield eng


def opened(who: dict[str, object]) -> ApiTokensState:
    return clients.opened(ApiTokensState, who, "/tokens")  # type: ignore[return-value]


def live(engine: sqlalchemy.Engine) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(t.id, t.user_name, t.scopes) for t in ApiTokens(engine, from_env={}).list() if t.revoked_at is None]


def every_change(state: ApiTokensState) -> None:
    call(state, "toggle_scope", "org:read", False)
    call(state, "set_api_label", "sneaky")
    call(state, "create_api_token")
    call(state, "revoke_api_token", 1)
    call(state, "revoke_api_token", 2)


def test_a_client_elsewhere_is_refused_and_changes_nothing(engine: sqlalchemy.Engine) -> None:
    before = live(engine)
    state = opened(STRANGER)
    assert state.refused == REFUSED and state.api_tokens == [] and not state.read and state.owner == ""
    every_change(state)
    call(state, "forget_secret")
    assert (state.refused, state.error, state.notice, state.secret_once, state.api_label) == (REFUSED, "", "", "", "")
    assert "script" not in shown(state) and live(engine) == before


def test_a_viewer_makes_a_read_token_sees_it_once_and_revokes_only_their_own(engine: sqlalchemy.Engine) -> None:
    state = opened(signed_in(engine, "vera", "viewer"))
    assert (state.owner, state.sees_all, state.may_change, state.scope_choices) == ("vera", False, True, READ)
    assert [(row.id, row.user, row.scopes, row.label, row.last_used) for row in state.api_tokens] == [
        (1, "vera", " ".join(READ), "vera's script", "never")]  # max's token is not listed
    call(state, "toggle_scope", "event:write", True)  # not the viewer's to tick: ignored
    call(state, "toggle_scope", "project:read", False)
    call(state, "set_api_label", "  claude code ")
    call(state, "create_api_token")
    made = state.secret_once
    assert len(made) == 64 and state.error == ""
    assert state.notice == "API token 3 made for vera (org:read event:read): copy it now, it is shown only once."
    assert (state.api_label, state.left_out, state.api_tokens[0].prefix) == ("", [], made[:8] + "…")
    caller = authenticate(engine, f"Bearer {made}", "event:read", ApiTokens(engine, from_env={}))
    assert (caller.name, caller.scopes) == ("vera", frozenset({"org:read", "event:read"}))
    assert ApiTokens(engine, from_env={}).list("vera")[-1].label == "claude code"

    call(state, "revoke_api_token", 2)  # max's
    assert state.error == NO_TOKEN and state.secret_once == "" and (2, "max", tuple(SCOPES)) in live(engine)
    call(state, "revoke_api_token", 3)
    assert (state.error, state.notice) == ("", "API token 3 is revoked: requests with it are refused.")
    assert state.api_tokens[0].revoked and state.api_tokens[0].revoked_on.endswith("UTC")
    assert live(engine) == [(1, "vera", tuple(READ)), (2, "max", tuple(SCOPES))]


def test_a_maintainer_has_every_scope_lists_every_token_and_revokes_anyone_s(engine: sqlalchemy.Engine) -> None:
    state = opened(signed_in(engine, "max", "maintainer"))
    assert (state.owner, state.sees_all, state.scope_choices) == ("max", True, list(SCOPES))
    assert [row.id for row in state.api_tokens] == [2, 1]  # newest first
    call(state, "create_api_token")
    assert state.secret_once and live(engine)[-1] == (3, "max", tuple(SCOPES))
    call(state, "revoke_api_token", 1)
    assert state.notice == "API token 1 is revoked: requests with it are refused." and state.secret_once == ""
    for scope in SCOPES:
        call(state, "toggle_scope", scope, False)
    call(state, "create_api_token")
    assert state.error == "A token needs at least one scope." and state.secret_once == ""
    assert [t[0] for t in live(engine)] == [2, 3]


def test_this_machine_with_no_user_makes_none_but_lists_and_revokes_every_token(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK)
    assert (state.owner, state.sees_all, state.scope_choices, len(state.api_tokens)) == ("", True, [], 2)
    call(state, "set_api_label", "typed")
    call(state, "create_api_token")
    assert state.error == NOT_SIGNED_IN and state.api_label == "" and len(live(engine)) == 2
    assert "sign in" in NOT_SIGNED_IN and "python -m app.inbox.tokens api NAME" in NOT_SIGNED_IN
    call(state, "revoke_api_token", 1)
    assert state.notice.startswith("API token 1 is revoked") and [t[0] for t in live(engine)] == [2]


def test_this_machine_signed_in_makes_tokens_for_its_user(engine: sqlalchemy.Engine) -> None:
    cookie = signed_in(engine, "vera", "viewer")["headers"]["cookie"]  # type: ignore[index]
    state = opened({**LOOPBACK, "headers": {**LOOPBACK["headers"], "cookie": cookie}})  # type: ignore[dict-item]
    assert (state.owner, state.sees_all, state.scope_choices) == ("vera", False, READ)
    call(state, "create_api_token")
    assert live(engine)[-1] == (3, "vera", tuple(READ))


def test_a_role_changed_since_the_page_was_read_decides_the_scopes(engine: sqlalchemy.Engine) -> None:
    state = opened(signed_in(engine, "max", "maintainer"))
    console.accounts().set_role("max", "viewer")  # ends max's sessions
    call(state, "create_api_token")
    assert state.refused == REFUSED and len(live(engine)) == 2


def test_the_secret_is_never_written_to_the_state_files(engine: sqlalchemy.Engine) -> None:
    state = opened(signed_in(engine, "max", "maintainer"))
    call(state, "create_api_token")
    made = state.secret_once
    written, reread = asyncio.run(persisted(state))
    assert len(made) == 64 and made in shown(state) and state.notice.encode() in written
    assert made.encode() not in written
    again = reread.get_substate(ApiTokensState.get_full_name().split(".")[1:])
    assert (again.secret_once, again.notice) == ("", state.notice)


def test_the_secret_goes_once_the_user_s_session_has_ended(engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    async def beat(_seconds: float) -> None:
        await asyncio.sleep(0)

    monkeypatch.setattr(form_state, "asyncio", type("Beats", (), {"sleep": staticmethod(beat)}))
    who = signed_in(engine, "vera", "viewer")
    state = opened(who)
    call(state, "create_api_token")
    call(state, "forget_secret")
    assert state.secret_once == ""
    call(state, "create_api_token")
    assert state.secret_once
    console.accounts().end_session(str(who["headers"]["cookie"]).split("=", 1)[1])  # type: ignore[index]
    call(state, "hold_secret")
    assert state.secret_once == "" and state.api_tokens == [] and state.refused == REFUSED


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_arguments_are_bounded_ignored_or_refused_with_a_sentence(engine: sqlalchemy.Engine, value: object) -> None:
    before = live(engine)
    state = opened(signed_in(engine, "vera", "viewer"))
    call(state, "revoke_api_token", value)
    assert state.error == NO_TOKEN
    call(state, "toggle_scope", value, value)
    call(state, "toggle_scope", value, False)
    call(state, "set_api_label", value)
    assert state.left_out in ([], ["org:read"]) and len(state.api_label) <= 101
    assert live(engine) == before
