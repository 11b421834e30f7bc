"""The inbox's JSON read API over ASGI, on a real SQLite inbox."""

from __future__ import annotations

import httpx
import pytest

from app.inbox import api
from app.inbox.accounts import COOKIE, Accounts, Viewer
from app.inbox.store import InboxReader, InboxStore
from tests.inbox.test_store import error, event_envelope

pytestmark = pytest.mark.anyio


def client(inbox: InboxStore, address: str = "127.0.0.1", cookies: dict[str, str] | None = None) -> httpx.AsyncClient:
    app = api.build(InboxReader(inbox.engine), Accounts(inbox.engine, from_env={}))
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://lookout.test", cookies=cookies)


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


async def test_sign_in_sets_an_httponly_session_cookie_and_sign_out_ends_it(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("alice", "viewer", "alice-secret")
    async with client(inbox, address="203.0.113.9") as http:
        wrong = await http.post(api.SIGN_IN, data={"name": "alice", "password": "nope"})
        assert (wrong.status_code, wrong.headers["location"]) == (303, "/signin?problem=mismatch")
        assert "set-cookie" not in wrong.headers
        signed = await http.post(api.SIGN_IN, data={"name": "alice", "password": "alice-secret"})
        assert (signed.status_code, signed.headers["location"]) == (303, "/issues")
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
        assert "Max-Age=604800" in cookie
        assert (await http.get("/api/inbox/issues")).status_code == 200  # the client keeps the cookie
        ended = await http.post(api.SIGN_OUT)
        assert ended.headers["location"] == "/signin" and "Max-Age=0" in ended.headers["set-cookie"]
        token = cookie.split(";")[0].split("=", 1)[1]
    async with client(inbox, address="203.0.113.9", cookies={COOKIE: token}) as http:
        assert (await http.get("/api/inbox/issues")).status_code == 401  # the session is gone


async def test_failed_sign_ins_are_throttled(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("alice", "viewer", "alice-secret")
    async with client(inbox, address="203.0.113.9") as http:
        for _ in range(5):
            assert (await http.post(api.SIGN_IN, data={"name": "alice", "password": "nope"})).headers["location"] \
                == "/signin?problem=mismatch"
        held = await http.post(api.SIGN_IN, data={"name": "alice", "password": "alice-secret"})  # even the right one
        assert held.headers["location"] == "/signin?problem=throttled&minutes=15" and "set-cookie" not in held.headers
        assert (await http.post(api.SIGN_IN, content=b"x" * 5000)).status_code == 413
