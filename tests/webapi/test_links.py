"""Sentry's links to issues (app/webapi/links.py) through the app's stack: this machine and a signed-in user
land on the issue's page, or the search for a link naming none; anyone else gets the same redirect to
the sign-in page for every link, with nothing looked up, so no answer says which issues exist."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from app.console.accounts import COOKIE, Accounts, Viewer
from plugin_support.sql_log import statements
from tests.webapi.inbox import Inbox, inbox, served

ELSEWHERE = ("10.213.0.2", 40000)  # a peer on another machine (tests/netns.py's addresses)
HERE = ("127.0.0.1", 40000)
BASE = "http://127.0.0.1:3000"


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inbox]:
    made = inbox(tmp_path_factory.mktemp("links"))
    yield made
    made.engine.dispose()


def opened(found: Inbox, link: str, client: tuple[str, int] = ELSEWHERE, base_url: str = BASE,
           cookies: dict[str, str] | None = None) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """The whole answer to `link`: status, raw headers, body."""
    with TestClient(served(found.engine), base_url=base_url, client=client, cookies=cookies) as http:
        answer = http.get(link, follow_redirects=False)
    return answer.status_code, answer.headers.raw, answer.content


def where(found: Inbox, link: str, client: tuple[str, int], cookies: dict[str, str] | None) -> str:
    status, headers, _ = opened(found, link, client, cookies=cookies)
    assert status == 302
    return dict(headers)[b"location"].decode()


def test_a_stranger_gets_the_same_answer_whatever_exists_and_nothing_is_looked_up(found: Inbox) -> None:
    cart = found.issues["missing-cart"]
    with statements(found.engine) as ran:
        answers = [
            opened(found, "/organizations/lookout/issues/WEB-2/"),  # exists
            opened(found, "/organizations/lookout/issues/WEB-9/"),  # does not
            opened(found, "/organizations/billing/issues/BILLING-1/"),  # no such project
            opened(found, f"/organizations/lookout/issues/{cart}/"),
            opened(found, f"/organizations/lookout/issues/{cart + 1000}/"),
            opened(found, "/organizations/lookout/issues/?query=is%3Aunresolved"),
            opened(found, "/organizations/lookout/issues/WEB-2/", cookies={COOKIE: "forged"}),
            opened(found, "/organizations/lookout/issues/WEB-2/", client=HERE, base_url="http://evil.example:3000"),  # rebinding
        ]
    assert answers[0][0] == 302 and dict(answers[0][1])[b"location"] == b"/signin"
    assert all(answer == answers[0] for answer in answers), answers
    assert [sql for sql in ran if "inbox_issue" in sql or "inbox_project" in sql] == []


def test_a_signed_in_user_and_this_machine_land_on_the_issue(found: Inbox) -> None:
    cart = found.issues["missing-cart"]
    signed_in = {COOKIE: Accounts(found.engine).start_session(Viewer("vic", "viewer"))}
    for client, cookies in ((ELSEWHERE, signed_in), (HERE, None)):
        for link in (f"/organizations/lookout/issues/{cart}/", "/organizations/x/issues/WEB-2"):
            assert where(found, link, client, cookies) == f"/issue?id={cart}"
        listed = where(found, "/organizations/lookout/issues/?query=is%3Aunresolved", client, cookies)
        assert listed == "/issues?query=is%3Aunresolved"
        assert where(found, "/organizations/lookout/issues/WEB-99/", client, cookies) == "/issues?query=WEB-99"
