"""The web API's endpoints in process (the app's stack: origin guard, CORS, the gate before the upload
API): Sentry's shapes, paging with `Link`, the refusals' statuses and sentences, bounds, what a
viewer's and a read-only token may do, bulk updates, merge (new events of the merged issues land in the
one that stays) and deletion, and the upload API still answering upload tokens."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import sentry_sdk
import sqlalchemy
from starlette.testclient import TestClient

from app.ingest.store import InboxStore
from app.projects.registry import Projects
from app.sourcemaps.tokens import Tokens
from app.webapi.tokens import ApiTokens
from tests.factories import sentry_sdk_envelopes, store_all
from tests.webapi.inbox import Inbox, _fail, inbox, served

ISSUES = "/api/0/projects/lookout/web/issues/"
ORG_ISSUES = "/api/0/organizations/lookout/issues/"
ISO_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


@pytest.fixture(scope="module")
def lookout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inbox, TestClient]]:
    found = inbox(tmp_path_factory.mktemp("endpoints"))
    with TestClient(served(found.engine), base_url="http://127.0.0.1:3000") as client:
        yield found, client
    found.engine.dispose()


def as_(found: Inbox, who: str = "ada") -> dict[str, str]:
    return {"Authorization": f"Bearer {found.tokens[who]}"}


def test_an_issue_has_sentrys_shape(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    answer = client.get(f"{ORG_ISSUES}WEB-2/", headers=as_(found))
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
    issue = answer.json()
    assert issue["id"] == str(found.issues["missing-cart"]) and issue["shortId"] == "WEB-2"
    assert issue["count"] == "2" and issue["status"] == "unresolved" and issue["level"] == "error"
    assert ISO_Z.fullmatch(issue["firstSeen"]) and ISO_Z.fullmatch(issue["lastSeen"])
    assert issue["permalink"] == f"http://127.0.0.1:3000/organizations/lookout/issues/{issue['id']}/"
    assert issue["project"] == {"id": str(found.project_id), "slug": "web", "name": "web"}
    assert client.get(f"{ORG_ISSUES}{issue['id']}/", headers=as_(found)).json() == issue


def test_the_list_pages_with_sentrys_link_header(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    first = client.get(ISSUES, params={"query": "", "per_page": "2"}, headers=as_(found))
    assert [i["shortId"] for i in first.json()] == ["WEB-2", "WEB-3"]
    assert 'rel="next"; results="true"; cursor="0:2:0"' in first.headers["link"]
    second = client.get(ISSUES, params={"query": "", "per_page": "2", "cursor": "0:2:0"}, headers=as_(found))
    assert [i["shortId"] for i in second.json()] == ["WEB-1"]
    assert 'rel="next"; results="false"' in second.headers["link"]


def test_search_takes_the_triage_syntax_and_an_event_id(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    listed = client.get(ORG_ISSUES, params={"query": "is:unresolved environment:production missing", "statsPeriod": "24h",
                                            "project": str(found.project_id)}, headers=as_(found)).json()
    assert {i["shortId"] for i in listed} == {"WEB-2", "WEB-3"}
    by_event = client.get(ORG_ISSUES, params={"query": found.events["missing-user"], "statsPeriod": "30d"},
                          headers=as_(found)).json()
    assert [i["shortId"] for i in by_event] == ["WEB-3"]


def test_the_latest_event_has_its_stack_as_threads_too(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    event = client.get(f"{ORG_ISSUES}WEB-1/events/latest/", headers=as_(found)).json()
    assert event["id"] == found.events["division by zero"] and event["groupID"] == str(found.issues["division by zero"])
    kinds = {entry["type"]: entry["data"] for entry in event["entries"]}
    [raised] = kinds["exception"]["values"]
    assert raised["type"] == "ZeroDivisionError" and raised["stacktrace"]["frames"][-1]["function"] == "_fail"
    assert kinds["threads"]["values"][0]["stacktrace"]["frames"] == raised["stacktrace"]["frames"]
    assert {"key": "environment", "value": "production"} in event["tags"]


@pytest.mark.parametrize(("path", "status", "words"), [
    ("/api/0/projects/lookout/nope/issues/", 404, "There is no project 'nope'"),
    (f"{ORG_ISSUES}WEB-99/", 404, "There is no issue 'WEB-99'"),
    (f"{ORG_ISSUES}OTHER-1/", 404, "There is no issue 'OTHER-1'"),
    (f"{ORG_ISSUES}WEB-1/events/{'0' * 32}/", 404, "has no stored event"),
    ("/api/0/organizations/lookout/replays/", 404, "Lookout's web API has no GET"),
    (f"{ISSUES}?cursor=nonsense", 400, "is not one this API gave"),
    (f"{ISSUES}?per_page=101", 400, "from 1 to 100"),
    (f"{ISSUES}?sort=best", 400, "Unknown sort"),
    (f"{ISSUES}?query=" + "x" * 1001, 400, "1,000"),
    (f"{ISSUES}?query=is:sleepy", 400, "is:"),
])
def test_refusals_are_a_sentence_with_their_status(lookout: tuple[Inbox, TestClient], path: str, status: int,
                                                   words: str) -> None:
    found, client = lookout
    answer = client.get(path, headers=as_(found))
    assert answer.status_code == status and answer.headers["content-type"] == "application/json"
    assert words in answer.json()["detail"]


def test_without_a_live_token_it_is_401(lookout: tuple[Inbox, TestClient]) -> None:
    _found, client = lookout
    assert client.get(ISSUES).status_code == 401
    refused = client.get(ISSUES, headers={"Authorization": "Bearer " + "0" * 64})
    assert refused.status_code == 401 and "not a Lookout API token" in refused.json()["detail"]


def test_a_viewers_and_a_read_only_token_read_but_change_nothing(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    for who in ("vic", "ada-read"):
        assert client.get(ISSUES, headers=as_(found, who)).status_code == 200
        for path in (ISSUES, ORG_ISSUES):
            refused = client.put(f"{path}?id={found.issues['missing-cart']}", json={"status": "resolved"},
                                 headers=as_(found, who))
            assert refused.status_code == 403 and "event:write" in refused.json()["detail"], path
        refused = client.delete(f"{ORG_ISSUES}?id={found.issues['missing-cart']}", headers=as_(found, who))
        assert refused.status_code == 403 and "delete issues" in refused.json()["detail"]
        assert client.get(f"{ORG_ISSUES}WEB-2/", headers=as_(found, who)).json()["status"] == "unresolved"
        noted = client.post(f"{ORG_ISSUES}WEB-2/notes/", json={"text": "hi"}, headers=as_(found, who))
        assert noted.status_code == 403
    with found.engine.connect() as connection:
        assert connection.execute(sqlalchemy.text("SELECT count(*) FROM inbox_comment")).scalar_one() == 0


def test_a_bulk_update_by_status_and_a_merge(tmp_path: Path) -> None:
    found = inbox(tmp_path)
    with TestClient(served(found.engine), base_url="http://127.0.0.1:3000") as client:
        ignored = client.put(f"{ISSUES}?status=unresolved", json={"status": "ignored", "ignoreDuration": 60},
                             headers=as_(found))
        assert ignored.json() == {"status": "ignored", "statusDetails": {}}
        assert [i["status"] for i in client.get(ISSUES, params={"query": ""}, headers=as_(found)).json()] == ["ignored"] * 3
        ids = sorted(found.issues.values())[1:]
        merged = client.put(f"{ISSUES}?id={ids[0]}&id={ids[1]}", json={"merge": 1}, headers=as_(found)).json()
        assert merged == {"merge": {"parent": str(found.issues["missing-cart"]), "children": [str(found.issues["missing-user"])]}}
        refused = client.put(f"{ORG_ISSUES}WEB-1/", json={"assignedTo": "team:1"}, headers=as_(found))
        assert refused.status_code == 400 and "no teams" in refused.json()["detail"]


def ingest(found: Inbox, project: str, *values: str) -> list[str]:
    """New events of `project` made by the real sentry-sdk, raised where the fixture's were (so of the
    same fingerprints: `_fail`'s); their ids."""
    [dsn] = [p.dsn("127.0.0.1:9") for p in Projects(found.engine).all() if p.name == project]
    with sentry_sdk_envelopes(dsn=dsn, release="web@1.0.0", environment="production") as bodies:
        made = []
        for value in values:
            try:
                _fail(value)
            except Exception:  # noqa: BLE001 - the SDK reports what was raised
                made.append(sentry_sdk.capture_exception() or "")
    store_all(InboxStore(found.engine), bodies, dsn)
    return made


def issues_of(found: Inbox, event_ids: list[str]) -> list[int]:
    with found.engine.connect() as connection:
        return [connection.execute(sqlalchemy.text("SELECT issue_id FROM inbox_event WHERE event_id = :e"), {"e": e}).scalar_one()
                for e in event_ids]


def test_the_organizations_bulk_update_merge_and_delete(tmp_path: Path) -> None:
    found = inbox(tmp_path)
    Projects(found.engine).add("api")
    [other] = issues_of(found, ingest(found, "api", "missing-api"))
    cart, user, division = (found.issues[v] for v in ("missing-cart", "missing-user", "division by zero"))
    with TestClient(served(found.engine), base_url="http://127.0.0.1:3000") as client:
        resolved = client.put(f"{ORG_ISSUES}?id={division}&id={other}", json={"status": "resolved"}, headers=as_(found))
        assert resolved.json() == {"status": "resolved", "statusDetails": {}}
        narrowed = client.put(f"{ORG_ISSUES}?id={division}&id={other}&project=api", json={"status": "muted"},
                              headers=as_(found))
        assert narrowed.json()["status"] == "ignored"  # a resolved issue too, as Sentry ignores it
        shown = {i["id"]: i["status"] for i in client.get(ORG_ISSUES, params={"query": ""}, headers=as_(found)).json()}
        assert (shown[str(division)], shown[str(other)]) == ("resolved", "ignored")

        across = client.put(f"{ORG_ISSUES}?id={cart}&id={other}", json={"merge": 1}, headers=as_(found))
        assert across.status_code == 400 and across.json()["detail"] == (
            "Merging across multiple projects is not supported: these issues are of api, web; "
            "merge the issues of one project at a time.")
        merged = client.put(f"{ORG_ISSUES}?id={cart}&id={user}", json={"merge": 1}, headers=as_(found))
        assert merged.json() == {"merge": {"parent": str(cart), "children": [str(user)]}}
        assert issues_of(found, ingest(found, "web", "missing-user", "missing-cart")) == [cart, cart]
        after = client.get(f"{ORG_ISSUES}{cart}/", headers=as_(found)).json()
        assert after["count"] == "5" and client.get(f"{ORG_ISSUES}{user}/", headers=as_(found)).status_code == 404

        writer = ApiTokens(found.engine).add("ada", scopes=["org:read", "project:read", "event:read", "event:write"])[1]
        refused = client.delete(f"{ORG_ISSUES}?id={other}", headers={"Authorization": f"Bearer {writer}"})
        assert refused.status_code == 403 and "event:admin" in refused.json()["detail"]
        unnamed = client.delete(ORG_ISSUES, headers=as_(found))
        assert unnamed.status_code == 400 and "id=" in unnamed.json()["detail"]
        deleted = client.delete(f"{ORG_ISSUES}?id={other}&id={user}", headers=as_(found))
        assert deleted.status_code == 204
        assert client.get(f"{ORG_ISSUES}{other}/", headers=as_(found)).status_code == 404
        assert client.get(f"{ORG_ISSUES}{cart}/", headers=as_(found)).status_code == 200


def test_it_answers_any_origin_without_credentials(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    preflight = client.options(ISSUES, headers={"Origin": "https://elsewhere.example", "Access-Control-Request-Method": "GET",
                                                "Access-Control-Request-Headers": "authorization"})
    assert preflight.headers["access-control-allow-origin"] == "*"
    assert "Authorization" in preflight.headers["access-control-allow-headers"]
    answer = client.get(ISSUES, headers={**as_(found), "Origin": "https://elsewhere.example"})
    assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in answer.headers


def test_upload_tokens_still_reach_the_upload_api_on_the_paths_it_shares(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    _row, upload = Tokens(found.engine).add(found.project_id, label="ci")
    who = client.get("/api/0/", headers={"Authorization": f"Bearer {upload}"}).json()
    assert who == {"user": None, "auth": {"scopes": ["project:releases"]}}
    assert client.get("/api/0/", headers=as_(found)).json()["user"]["name"] == "ada"
    refused = client.get(ISSUES, headers={"Authorization": f"Bearer {upload}"})
    assert refused.status_code == 401 and "upload token" in refused.json()["detail"]


ODD = ["%C2%B2", "0", "-1", "9" * 30, "WEB-" + "Z" * 14, "x" * 300, "%00", "..", "WEB-1%2F..", "latest"]


@pytest.mark.parametrize("odd", ODD)
def test_odd_names_and_parameters_are_refused_never_a_500(lookout: tuple[Inbox, TestClient], odd: str) -> None:
    found, client = lookout
    paths = [f"/api/0/projects/lookout/{odd}/issues/", f"{ORG_ISSUES}{odd}/", f"{ORG_ISSUES}WEB-1/events/{odd}/",
             f"{ORG_ISSUES}WEB-1/tags/{odd}/", f"/api/0/organizations/{odd}/issues/", f"{ORG_ISSUES}?project={odd}",
             f"{ISSUES}?per_page={odd}", f"{ISSUES}?cursor={odd}", f"{ISSUES}?id={odd}",
             f"/api/0/organizations/lookout/events/?field={odd}", f"/api/0/organizations/lookout/releases/?query={odd}"]
    for path in paths:
        answer = client.get(path, headers=as_(found))
        assert answer.status_code < 500 and answer.headers["content-type"] == "application/json", (path, answer.text)
    for method, path in (("PUT", f"{ORG_ISSUES}?id={odd}"), ("PUT", f"{ORG_ISSUES}?project={odd}"),
                         ("DELETE", f"{ORG_ISSUES}?id={odd}"), ("DELETE", f"{ORG_ISSUES}?id=999999&project={odd}")):
        answer = client.request(method, path, content=b"{}", headers=as_(found))  # no change asked, no issue named
        assert answer.status_code in (200, 204, 400, 404), (method, path, answer.text)


@pytest.mark.parametrize(("method", "path", "body"), [
    ("PUT", f"{ORG_ISSUES}WEB-1/", b"[]"), ("PUT", f"{ORG_ISSUES}WEB-1/", b"{"),
    ("PUT", f"{ORG_ISSUES}WEB-1/", b'{"status": 3}'), ("PUT", f"{ORG_ISSUES}WEB-1/", b'{"assignedTo": ["x"]}'),
    ("PUT", f"{ORG_ISSUES}WEB-1/", b'{"assignedTo": "user:999"}'),
    ("PUT", f"{ORG_ISSUES}WEB-1/", b'{"status": "ignored", "ignoreCount": -1}'),
    ("PUT", f"{ORG_ISSUES}WEB-1/", b'{"status": "ignored", "ignoreUserCount": 5}'),
    ("PUT", f"{ISSUES}?id=1", b'{"merge": 1}'), ("POST", f"{ORG_ISSUES}WEB-1/notes/", b'{"text": ""}'),
    ("POST", f"{ORG_ISSUES}WEB-1/notes/", b'{"text": "' + b"x" * 10_001 + b'"}'),
])
def test_bodies_lookout_cannot_take_are_400_with_a_sentence(lookout: tuple[Inbox, TestClient], method: str, path: str,
                                                            body: bytes) -> None:
    found, client = lookout
    answer = client.request(method, path, content=body, headers=as_(found))
    assert answer.status_code == 400 and answer.json()["detail"], answer.text


def test_a_body_over_64_kib_is_413(lookout: tuple[Inbox, TestClient]) -> None:
    found, client = lookout
    answer = client.post(f"{ORG_ISSUES}WEB-1/notes/", content=b"x" * (64 * 1024 + 1), headers=as_(found))
    assert answer.status_code == 413 and "limit" in answer.json()["detail"]
