"""The inbox's JSON read API over ASGI, on a real SQLite inbox: who may read, sign-in, stats."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest
import sqlalchemy

from app.console.accounts import COOKIE, Accounts, Viewer
from app.inbox import json_api
from app.inbox.reading import InboxReader
from app.inbox.triage import Triage
from app.ingest.store import InboxStore
from plugin_support.concurrency import Peak
from tests.factories import error, event_envelope

pytestmark = pytest.mark.anyio


EVIL = "https://evil.example"
STATS = {"accepted": 3, "outbox": {"pending": {"envelopes": 0, "bytes": 0}}}


def client(inbox: InboxStore, address: str = "127.0.0.1", cookies: dict[str, str] | None = None,
           base_url: str = "http://localhost:8000") -> httpx.AsyncClient:
    app = json_api.build(InboxReader(inbox.engine), Accounts(inbox.engine, from_env={}), stats=lambda: STATS)
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url=base_url, cookies=cookies)


async def test_issues_their_detail_and_an_event_as_sent(inbox: InboxStore) -> None:
    first, second = error("'user'"), error("'user'")
    inbox.ingest_envelope(event_envelope(first), received_at=100.0)
    inbox.ingest_envelope(event_envelope(second), received_at=200.0)
    inbox.ingest_envelope(event_envelope(error("bad", kind="ValueError")), received_at=150.0)
    async with client(inbox) as http:
        listed = (await http.get("/api/inbox/issues")).json()
        assert listed["total"] == 2
        assert [(i["title"], i["event_count"]) for i in listed["issues"]] == [("KeyError: 'user'", 2), ("ValueError: bad", 1)]
        top = listed["issues"][0]
        assert top["last_event_id"] == second["event_id"] and top["status"] == "unresolved"
        assert (await http.get(f"/api/inbox/issues/{top['id']}")).json() == top
        stored = (await http.get(f"/api/inbox/events/{first['event_id']}")).json()
        assert stored["event"] == first and stored["issue_id"] == top["id"]
        paged = (await http.get("/api/inbox/issues", params={"limit": 1, "offset": 1})).json()
        assert [i["title"] for i in paged["issues"]] == ["ValueError: bad"] and paged["total"] == 2


async def test_unknown_ids_and_bad_paging_get_a_status_and_a_sentence(inbox: InboxStore) -> None:
    async with client(inbox) as http:
        missing = await http.get("/api/inbox/issues/999")
        assert missing.status_code == 404 and missing.json() == {"detail": "There is no issue 999."}
        assert (await http.get("/api/inbox/events/0123456789abcdef0123456789abcdef")).status_code == 404
        bad = await http.get("/api/inbox/issues", params={"limit": "lots"})
        assert bad.status_code == 400 and "whole numbers" in bad.json()["detail"]
        assert (await http.get("/api/inbox/issues", params={"limit": 0})).status_code == 400


async def test_other_machines_need_a_signed_in_session(inbox: InboxStore) -> None:
    async with client(inbox, address="203.0.113.9") as http:
        for path in ("/api/inbox/issues", "/api/inbox/issues/1", "/api/inbox/events/x"):
            refused = await http.get(path)
            assert refused.status_code == 401 and "Sign in at /signin" in refused.json()["detail"]
    Accounts(inbox.engine, from_env={}).add_user("alice", "viewer", "alice-secret")
    token = Accounts(inbox.engine, from_env={}).start_session(Viewer("alice", "viewer"))
    async with client(inbox, address="203.0.113.9", cookies={COOKIE: token}) as http:
        assert (await http.get("/api/inbox/issues")).status_code == 200
    async with client(inbox, address="203.0.113.9", cookies={COOKIE: "forged"}) as http:
        assert (await http.get("/api/inbox/issues")).status_code == 401


async def test_a_request_forwarded_for_another_machine_is_not_this_machines(inbox: InboxStore) -> None:
    async with client(inbox) as http:  # a proxy on this machine, serving a client elsewhere
        forwarded = await http.get("/api/inbox/issues", headers={"X-Forwarded-For": "203.0.113.9"})
        assert forwarded.status_code == 401
        assert (await http.get("/api/inbox/issues", headers={"X-Forwarded-For": "127.0.0.1"})).status_code == 200
    async with client(inbox, address="203.0.113.9") as http:  # claiming to be forwarded for loopback
        assert (await http.get("/api/inbox/issues", headers={"X-Forwarded-For": "127.0.0.1"})).status_code == 401


async def test_every_x_forwarded_for_line_is_read(inbox: InboxStore) -> None:
    # HAProxy's `option forwardfor` adds its own line after the client's invented one.
    lines = [("X-Forwarded-For", "127.0.0.1"), ("X-Forwarded-For", "203.0.113.9")]
    async with client(inbox) as http:
        assert (await http.get("/api/inbox/issues", headers=lines)).status_code == 401


async def test_another_sites_page_in_a_browser_on_this_machine_is_not_this_machine(inbox: InboxStore) -> None:
    async with client(inbox) as http:
        foreign = await http.get("/api/inbox/issues", headers={"Origin": EVIL})
        assert foreign.status_code == 401 and "access-control-allow-origin" not in foreign.headers
        assert (await http.get("/api/inbox/issues", headers={"Origin": "null"})).status_code == 401
        own = await http.get("/api/inbox/issues", headers={"Origin": "http://localhost:8000"})
        assert own.status_code == 200 and "access-control-allow-origin" not in own.headers
        dev_page = await http.get("/api/inbox/issues", headers={"Origin": "http://localhost:3000"})
        assert dev_page.status_code == 200


async def test_dns_rebinding_gets_no_trust(inbox: InboxStore) -> None:
    # evil.example now resolves to 127.0.0.1: its page is "same origin" with the request it sends.
    async with client(inbox, base_url="http://evil.example:8000") as http:
        assert (await http.get("/api/inbox/issues", headers={"Origin": "http://evil.example:8000"})).status_code == 401
        assert (await http.get("/api/inbox/issues")).status_code == 401
    async with client(inbox, base_url="http://127.0.0.1:8000") as http:
        assert (await http.get("/api/inbox/issues", headers={"Origin": "http://127.0.0.1:8000"})).status_code == 200


async def test_the_tunnels_stats_need_the_consoles_access(inbox: InboxStore) -> None:
    async with client(inbox, address="203.0.113.9") as http:
        refused = await http.get(json_api.STATS)
        assert refused.status_code == 401 and "Sign in" in refused.json()["detail"]
    async with client(inbox) as http:
        assert (await http.get(json_api.STATS)).json() == STATS
        assert (await http.get(json_api.STATS, headers={"Origin": EVIL})).status_code == 401


async def test_sign_in_sets_an_httponly_session_cookie_and_sign_out_ends_it(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("alice", "viewer", "alice-secret")
    async with client(inbox, address="203.0.113.9") as http:
        wrong = await http.post(json_api.SIGN_IN, data={"name": "alice", "password": "nope"})
        assert (wrong.status_code, wrong.headers["location"]) == (303, "/signin?problem=mismatch")
        assert "set-cookie" not in wrong.headers
        signed = await http.post(json_api.SIGN_IN, data={"name": "alice", "password": "alice-secret"})
        assert (signed.status_code, signed.headers["location"]) == (303, "/issues")
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert "Max-Age=604800" in cookie
        assert (await http.get("/api/inbox/issues")).status_code == 200  # the client keeps the cookie
        ended = await http.post(json_api.SIGN_OUT)
        assert ended.headers["location"] == "/signin" and "Max-Age=0" in ended.headers["set-cookie"]
        token = cookie.split(";")[0].split("=", 1)[1]
    async with client(inbox, address="203.0.113.9", cookies={COOKIE: token}) as http:
        assert (await http.get("/api/inbox/issues")).status_code == 401  # the session is gone


async def test_failed_sign_ins_are_throttled(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("alice", "viewer", "alice-secret")
    async with client(inbox, address="203.0.113.9") as http:
        for _ in range(5):
            assert (await http.post(json_api.SIGN_IN, data={"name": "alice", "password": "nope"})).headers["location"] \
                == "/signin?problem=mismatch"
        held = await http.post(json_api.SIGN_IN, data={"name": "alice", "password": "alice-secret"})  # even the right one
        assert held.headers["location"] == "/signin?problem=throttled&minutes=15" and "set-cookie" not in held.headers
        assert (await http.post(json_api.SIGN_IN, content=b"x" * 5000)).status_code == 413


async def test_behind_a_proxy_on_this_machine_the_throttle_counts_each_client_address(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("alice", "viewer", "alice-secret")
    async with client(inbox, address="127.0.0.1") as proxy:  # every visitor's peer is the proxy
        for attempt in range(5):
            failed = await proxy.post(json_api.SIGN_IN, data={"name": f"guess{attempt}", "password": "nope"},
                                      headers={"X-Forwarded-For": "203.0.113.9"})
            assert failed.headers["location"] == "/signin?problem=mismatch"
        held = await proxy.post(json_api.SIGN_IN, data={"name": "guess9", "password": "nope"},
                                headers={"X-Forwarded-For": "203.0.113.9"})
        assert held.headers["location"].startswith("/signin?problem=throttled")
        other = await proxy.post(json_api.SIGN_IN, data={"name": "alice", "password": "alice-secret"},
                                 headers={"X-Forwarded-For": "198.51.100.7"})
        assert other.headers["location"] == "/issues"  # another visitor is not locked out


async def test_a_large_sign_in_body_is_not_read_past_the_limit(inbox: InboxStore) -> None:
    pulled = 0

    async def ten_mebibytes() -> AsyncIterator[bytes]:
        nonlocal pulled
        for _ in range(160):
            pulled += 1
            yield b"x" * 65536

    async with client(inbox, address="203.0.113.9") as http:
        refused = await http.post(json_api.SIGN_IN, content=ten_mebibytes())  # chunked: no Content-Length
        assert refused.status_code == 413 and "4096 bytes" in refused.json()["detail"]
        assert pulled <= 2
        declared = await http.post(json_api.SIGN_IN, content=b"x" * 5000)
        assert declared.status_code == 413


async def test_other_sites_pages_may_not_sign_in_or_out(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("mallory", "viewer", "mallory-secret")
    async with client(inbox, address="203.0.113.9") as http:
        for path in (json_api.SIGN_IN, json_api.SIGN_OUT):  # login CSRF: the victim signed in as the attacker
            refused = await http.post(path, data={"name": "mallory", "password": "mallory-secret"},
                                      headers={"Origin": EVIL})
            assert refused.status_code == 403 and "other sites" in refused.json()["detail"]
            assert "set-cookie" not in refused.headers
        own = await http.post(json_api.SIGN_IN, data={"name": "mallory", "password": "mallory-secret"},
                              headers={"Origin": "http://localhost:8000"})
        assert own.headers["location"] == "/issues"


async def test_the_cookie_is_secure_when_a_proxy_on_this_machine_says_https(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("alice", "viewer", "alice-secret")
    form = {"name": "alice", "password": "alice-secret"}
    async with client(inbox, address="127.0.0.1") as proxy:
        signed = await proxy.post(json_api.SIGN_IN, data=form, headers={"X-Forwarded-For": "203.0.113.9",
                                                                   "X-Forwarded-Proto": "https"})
        assert "; Secure" in signed.headers["set-cookie"]
        ended = await proxy.post(json_api.SIGN_OUT, headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"})
        assert "; Secure" in ended.headers["set-cookie"]
    async with client(inbox, address="203.0.113.9") as elsewhere:  # a client's own claim proves nothing
        signed = await elsewhere.post(json_api.SIGN_IN, data=form, headers={"X-Forwarded-Proto": "https"})
        assert signed.headers["location"] == "/issues" and "Secure" not in signed.headers["set-cookie"]
    async with client(inbox, address="203.0.113.9", base_url="https://lookout.example.com") as direct:
        assert "; Secure" in (await direct.post(json_api.SIGN_IN, data=form)).headers["set-cookie"]


async def test_a_removed_users_session_ends_at_once(inbox: InboxStore) -> None:
    accounts = Accounts(inbox.engine, from_env={})
    accounts.add_user("alice", "maintainer", "alice-secret")
    token = accounts.start_session(Viewer("alice", "maintainer"))
    async with client(inbox, address="203.0.113.9", cookies={COOKIE: token}) as http:
        assert (await http.get("/api/inbox/issues")).status_code == 200
        accounts.remove_user("alice")
        assert (await http.get("/api/inbox/issues")).status_code == 401


async def test_passwords_are_checked_a_few_at_a_time(inbox: InboxStore) -> None:
    """Each scrypt run takes 16 MiB: a burst of sign-ins must not run dozens at once."""
    peak = Peak()

    class Counted(Accounts):
        def authenticate(self, name: str, password: str) -> Viewer | None:
            with peak.inside():
                return None

    app = json_api.build(InboxReader(inbox.engine), Counted(inbox.engine, from_env={}))
    transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://localhost:8000") as proxy:
        await asyncio.gather(*(proxy.post(json_api.SIGN_IN, data={"name": f"n{i}", "password": "x"},
                                          headers={"X-Forwarded-For": f"203.0.113.{i}"}) for i in range(12)))
    assert 1 <= peak.most <= json_api.PASSWORDS_AT_ONCE


async def test_a_search_query_answers_and_one_that_does_not_parse_gets_400_with_its_sentence(inbox: InboxStore) -> None:
    inbox.ingest_envelope(event_envelope(error("'user'")), received_at=100.0)
    inbox.ingest_envelope(event_envelope({**error("disk full", kind="OSError"), "tags": {"shard": "b_2"}}), received_at=200.0)
    Triage(inbox.engine).change_status(1, "resolved", "alice")
    async with client(inbox) as http:
        found = (await http.get("/api/inbox/issues", params={"query": "shard:b_2 disk"})).json()
        assert [i["title"] for i in found["issues"]] == ["OSError: disk full"] and found["total"] == 1
        assert found["issues"][0]["short_id"] == "LOOKOUT-2" and found["direct"] is False
        assert (await http.get("/api/inbox/issues", params={"query": "shard:b?2"})).json()["total"] == 0
        direct = (await http.get("/api/inbox/issues", params={"query": "LOOKOUT-1"})).json()
        assert direct["direct"] is True and [i["id"] for i in direct["issues"]] == [1]
        by_count = (await http.get("/api/inbox/issues", params={"query": "is:resolved", "sort": "new"})).json()
        assert [i["id"] for i in by_count["issues"]] == [1]
        still = (await http.get("/api/inbox/issues", params={"status": "open", "query": "level:error"})).json()
        assert [i["id"] for i in still["issues"]] == [2]
        for params, sentence in (
            ({"query": "timesSeen:>abc"}, '"timesSeen:>abc" needs a number after the comparison.'),
            ({"query": "is:bogus"}, 'Unknown "is:" value "bogus": use unresolved, resolved, ignored, regressed, assigned'
                                    " or unassigned."),
            ({"query": "x" * 1001}, "The search is 1,001 characters long; at most 1,000 are allowed."),
            ({"sort": "oldest"}, 'Unknown sort "oldest": use date, new or freq.'),
            ({"query": "assigned:me"}, '"assigned:me" needs a signed-in user: name the user instead.'),
        ):
            refused = await http.get("/api/inbox/issues", params=params)
            assert (refused.status_code, refused.json()) == (400, {"detail": sentence})


async def test_assigned_to_me_is_the_signed_in_user(inbox: InboxStore) -> None:
    for name in ("'a'", "'b'"):
        inbox.ingest_envelope(event_envelope(error(name)))
    with inbox.engine.begin() as connection:
        connection.execute(sqlalchemy.text("update inbox_issue set assignee = 'alice' where id = 2"))
    accounts = Accounts(inbox.engine, from_env={})
    accounts.add_user("alice", "viewer", "alice-secret")
    token = accounts.start_session(Viewer("alice", "viewer"))
    async with client(inbox, address="203.0.113.9", cookies={COOKIE: token}) as http:
        mine = (await http.get("/api/inbox/issues", params={"query": "assigned:me"})).json()
        assert [(i["id"], i["assignee"]) for i in mine["issues"]] == [(2, "alice")]
