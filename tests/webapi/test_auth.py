"""app/webapi/auth.py: a web API request's Authorization header, read bounded, makes a caller with
the scopes its token and its user's role now allow, on SQLite and PostgreSQL; each refusal is a 401
or 403 with a sentence that never echoes the token; an upload token is told apart, and so is an API
token on the routes the upload API shares."""

from __future__ import annotations

import re

import pytest
import sqlalchemy

from app.console.accounts import Accounts
from app.projects.registry import Projects
from app.protocol.bearer import MAX_HEADER_CHARS
from app.sourcemaps.tokens import Tokens
from app.webapi.auth import ApiAuthError, ApiCaller, authenticate, is_api_token
from app.webapi.scopes import SCOPES
from app.webapi.tokens import ApiTokens

HOW = "make one on the console's Tokens page or with `python -m app.inbox.tokens api NAME`"


@pytest.fixture
def tokens(engine: sqlalchemy.Engine) -> ApiTokens:
    accounts = Accounts(engine, from_env={})
    accounts.add_user("vera", "viewer", "vera-password")
    accounts.add_user("max", "maintainer", "max-password")
    return ApiTokens(engine, from_env={})


def refused(engine: sqlalchemy.Engine, tokens: ApiTokens, authorization: str | None, scope: str = "event:read",
            status: int = 401) -> str:
    with pytest.raises(ApiAuthError) as caught:
        authenticate(engine, authorization, scope, tokens)
    assert caught.value.status == status and str(caught.value) == caught.value.message
    for part in re.findall(r"[0-9a-fA-F]{8,}", authorization or ""):
        assert part[:8] not in caught.value.message  # the token is never echoed
    return caught.value.message


def test_a_live_token_with_the_scope_makes_its_caller(engine: sqlalchemy.Engine, tokens: ApiTokens) -> None:
    row, secret = tokens.add("max")
    for header in (f"Bearer {secret}", f"bearer {secret}", f"  BEARER\t{secret}  ", f"Bearer {secret}".ljust(MAX_HEADER_CHARS)):
        for scope in SCOPES:
            caller = authenticate(engine, header, scope, tokens)
            assert caller == ApiCaller(caller.user_id, "max", "maintainer", frozenset(SCOPES), row.id)
            assert isinstance(caller.user_id, int)
    assert tokens.list()[0].last_used_at is not None


def test_the_store_defaults_to_the_console_users_of_the_environment(
    engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.console.accounts import hash_password

    monkeypatch.setenv("LOOKOUT_CONSOLE_USERS", f"erin:viewer:{hash_password('erin-password')}")
    _, secret = ApiTokens(engine).add("erin")
    assert authenticate(engine, f"Bearer {secret}", "org:read").name == "erin"


def test_a_missing_or_malformed_header_is_401_with_a_sentence(engine: sqlalchemy.Engine, tokens: ApiTokens) -> None:
    _, secret = tokens.add("vera")
    for missing in (None, "", "   ", "Bearer", "Bearer   "):
        assert refused(engine, tokens, missing) == f"No API token: send `Authorization: Bearer <token>`; {HOW}."
    assert refused(engine, tokens, f"Basic {secret}") == (
        "API tokens are sent as `Authorization: Bearer <token>`, not with the 'Basic' scheme.")
    for long in (f"Bearer {secret}".ljust(MAX_HEADER_CHARS + 1), "Bearer " + "a" * 10_000_000):
        assert refused(engine, tokens, long) == (
            "The Authorization header is over 200 characters: an API token is sent as `Bearer ` and its 64 hex digits.")
    for unknown in (f"Bearer {'0' * 64}", f"Bearer {secret.upper()}", f"Bearer {secret[:-1]}", f"Bearer {secret} x",
                    f"Bearer {secret[:8]}{'0' * 56}", "Bearer sntryu_abc"):
        assert refused(engine, tokens, unknown) == f"This is not a Lookout API token; {HOW}.", unknown


def test_an_upload_token_is_401_saying_it_only_uploads_source_maps(engine: sqlalchemy.Engine, tokens: ApiTokens) -> None:
    Projects(engine).local_dsn()
    _, upload_secret = Tokens(engine).add(1)
    assert refused(engine, tokens, f"Bearer {upload_secret}") == (
        "This is an upload token, which only uploads source maps: the web API takes an API token; " + HOW + ".")
    _, api_secret = tokens.add("max")
    assert is_api_token(engine, f"Bearer {api_secret}") is True
    for other in (f"Bearer {upload_secret}", None, "", "Basic x", "Bearer " + "0" * 64, "Bearer " + "a" * 500):
        assert is_api_token(engine, other) is False, other


def test_a_revoked_token_or_a_removed_user_s_is_401_with_a_sentence(engine: sqlalchemy.Engine, tokens: ApiTokens) -> None:
    (revoked, secret), (_, vera_secret) = tokens.add("max"), tokens.add("vera")
    tokens.clock = lambda: 1_795_000_000.0  # 2026-11-18 11:06:40 UTC
    tokens.revoke(revoked.id)
    assert refused(engine, tokens, f"Bearer {secret}") == f"This API token was revoked on 2026-11-18 11:06 UTC; {HOW}."
    assert is_api_token(engine, f"Bearer {secret}") is True  # still the web API's to refuse
    Accounts(engine, from_env={}).remove_user("vera")
    assert refused(engine, tokens, f"Bearer {vera_secret}") == (
        f"This API token's user no longer exists, so the token no longer works; {HOW} for a current user.")
    assert is_api_token(engine, f"Bearer {vera_secret}") is True


def test_a_token_without_the_scope_is_403_naming_it(engine: sqlalchemy.Engine, tokens: ApiTokens) -> None:
    _, reader = tokens.add("max", ["org:read", "event:read"])
    assert authenticate(engine, f"Bearer {reader}", "event:read", tokens).scopes == frozenset({"org:read", "event:read"})
    assert refused(engine, tokens, f"Bearer {reader}", "event:write", 403) == (
        "This token may not change issues (status, assignment, notes, merge): it lacks the event:write scope.")
    assert refused(engine, tokens, f"Bearer {reader}", "project:read", 403) == (
        "This token may not read projects and releases: it lacks the project:read scope.")
    _, writer = tokens.add("max")
    Accounts(engine, from_env={}).set_role("max", "viewer")
    assert refused(engine, tokens, f"Bearer {writer}", "event:admin", 403) == (
        "This token may not delete issues: its user's role (viewer) does not allow the event:admin scope.")
    assert authenticate(engine, f"Bearer {writer}", "event:read", tokens).role == "viewer"


def test_an_unknown_scope_is_the_endpoint_s_mistake(engine: sqlalchemy.Engine, tokens: ApiTokens) -> None:
    _, secret = tokens.add("max")
    with pytest.raises(ValueError, match="unknown scope 'event:delete'"):
        authenticate(engine, f"Bearer {secret}", "event:delete", tokens)
