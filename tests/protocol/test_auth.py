"""Sentry's auth forms as Relay reads them: X-Sentry-Auth, Authorization (Sentry or Basic) and the
sentry_key query parameter, one at a time; and the key of an envelope's DSN."""

from __future__ import annotations

import base64

import pytest

from app.protocol.auth import key_of_dsn, sentry_key
from reflex_lookout.protocol.asgi import Refused


def scope(query: bytes = b"", **headers: str) -> dict:
    return {"query_string": query,
            "headers": [(name.replace("_", "-").lower().encode(), value.encode()) for name, value in headers.items()]}


def basic(credential: bytes) -> str:
    return "Basic " + base64.b64encode(credential).decode()


@pytest.mark.parametrize("request_scope", [
    scope(X_Sentry_Auth="Sentry sentry_version=5, sentry_client=raven-node/2.6.4, sentry_key=pub, sentry_secret=s"),
    scope(X_Sentry_Auth="sentry_key=pub, sentry_version=7"),  # no scheme: the header's name says it is Sentry's
    scope(Authorization="Sentry sentry_key=pub,sentry_version=7"),
    scope(Authorization="sentry sentry_key=pub"),  # the scheme in any case, as Relay takes it
    scope(Authorization=basic(b"pub:secret")),
    scope(Authorization=basic(b"pub:")),
    scope(b"sentry_version=7&sentry_key=pub"),
], ids=["x-sentry-auth", "x-sentry-auth-bare", "authorization-sentry", "authorization-lower", "basic", "basic-no-secret",
        "query"])
def test_each_form_names_the_key(request_scope: dict) -> None:
    assert sentry_key(request_scope) == "pub"


@pytest.mark.parametrize("request_scope", [
    scope(),
    scope(Authorization="Bearer pub"),  # another scheme is no Sentry auth
    scope(Authorization=basic(b"no colon")),  # Relay skips a Basic credential that is not user:secret
    scope(Authorization="Basic %%%"),
    scope(X_Sentry_Auth="Sentry sentry_version=7"),
    scope(b"sentry_data=%7B%7D"),
], ids=["none", "bearer", "basic-no-colon", "basic-not-base64", "no-key-in-header", "query-without-key"])
def test_no_key_is_named(request_scope: dict) -> None:
    assert sentry_key(request_scope) == ""


@pytest.mark.parametrize(("request_scope", "named"), [
    (scope(b"sentry_key=pub", X_Sentry_Auth="Sentry sentry_key=pub"), "sentry_key query parameter and X-Sentry-Auth"),
    (scope(X_Sentry_Auth="Sentry sentry_key=pub", Authorization="Sentry sentry_key=other"),
     "X-Sentry-Auth and Authorization: Sentry"),
    (scope(b"sentry_key=pub", Authorization=basic(b"pub:secret")), "sentry_key query parameter and Authorization: Basic"),
], ids=["query-and-header", "two-headers", "query-and-basic"])
def test_two_forms_at_once_are_refused_with_a_sentence(request_scope: dict, named: str) -> None:
    with pytest.raises(Refused) as refused:
        sentry_key(request_scope)
    assert refused.value.status == 400 and refused.value.reason == "multiple_auth"
    assert "multiple authorization payloads" in refused.value.message and named in refused.value.message


def test_the_key_of_an_envelope_dsn_names_its_project() -> None:
    assert key_of_dsn("http://pub@lookout.example/3", 3) == "pub"
    assert key_of_dsn("http://pub@lookout.example/3", 4) == ""
    assert key_of_dsn("not a dsn", 3) == key_of_dsn(None, 3) == ""
