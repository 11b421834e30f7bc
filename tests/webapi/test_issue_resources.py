"""An issue's events list (app/webapi/issue_resources.py) through the app's stack, on an issue of 25 stored
events: a page reads only the stored events it shows (a listener on the engine counts the rows each
statement reading their payloads returns), its cursor walks them all once, a query reads at most
SCAN_PER_ROW stored events per row asked for, and one token has at most HEAVY_AT_ONCE lists running
(429 past it) while another token is served."""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import sqlalchemy
from starlette.testclient import TestClient

from app.ingest.store import InboxStore
from app.projects.registry import Projects
from app.webapi.handler_context import HEAVY_AT_ONCE
from app.webapi.issue_resources import SCAN_PER_ROW
from tests.factories import error, event_envelope
from tests.webapi.inbox import Inbox, inbox, served

STORED = 25
SHARD_A = [number for number in range(STORED) if number % 5 == 0]  # the events tagged shard:a
NEXT = re.compile(r'rel="next"; results="(true|false)"; cursor="([0-9:]+)"')


@pytest.fixture(scope="module")
def lookout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Inbox, TestClient, str, list[str]]]:
    """The inbox, a client, the events list of an issue of STORED events, their ids (the oldest first)."""
    found = inbox(tmp_path_factory.mktemp("issue_parts"))
    [web] = [project for project in Projects(found.engine).all() if project.name == "web"]
    dsn, store, ids = web.dsn("127.0.0.1:9"), InboxStore(found.engine), []
    for number in range(STORED):
        event = error("'shard'") | {"tags": {"shard": "a" if number in SHARD_A else "b", "number": str(number)}}
        store.ingest_envelope(event_envelope(event, dsn), received_at=1000.0 + number, dsn=dsn)
        ids.append(event["event_id"])
    with found.engine.connect() as connection:
        issue = connection.execute(sqlalchemy.text("SELECT issue_id FROM inbox_event WHERE event_id = :e"),
                                   {"e": ids[0]}).scalar_one()
    with TestClient(served(found.engine), base_url="http://127.0.0.1:3000") as client:
        yield found, client, f"/api/0/organizations/lookout/issues/{issue}/events/", ids
    found.engine.dispose()


def as_(found: Inbox, who: str = "ada-read") -> dict[str, str]:
    return {"Authorization": f"Bearer {found.tokens[who]}"}


@contextlib.contextmanager
def events_read(engine: sqlalchemy.Engine) -> Iterator[list[int]]:
    """How many stored events' payloads the statements run inside the block return: a listener on the
    engine runs each such statement again as a count."""
    counts: list[int] = []

    def count(_connection: Any, cursor: Any, sql: str, parameters: Any, *_rest: Any) -> None:
        if "inbox_event.payload" in sql:
            counts.append(cursor.connection.execute(f"SELECT count(*) FROM ({sql})", parameters).fetchone()[0])

    sqlalchemy.event.listen(engine, "after_cursor_execute", count)
    try:
        yield counts
    finally:
        sqlalchemy.event.remove(engine, "after_cursor_execute", count)


def page(lookout: tuple[Inbox, TestClient, str, list[str]], **params: str) -> tuple[httpx.Response, int, tuple[str, str]]:
    """The answer, how many stored events it read, and its next link's (results, cursor) (empty: no link)."""
    found, client, path, _ids = lookout
    with events_read(found.engine) as counts:
        answer = client.get(path, params=params, headers=as_(found))
    assert answer.status_code == 200, answer.text
    following = NEXT.search(answer.headers.get("link", ""))
    return answer, sum(counts), (following.group(1), following.group(2)) if following else ("", "")


def test_a_page_reads_only_the_events_it_shows_and_its_cursor_walks_them_all(lookout: Any) -> None:
    ids = lookout[3]
    for limit in (2, 7):
        answer, read, following = page(lookout, limit=str(limit))
        assert read == limit and len(answer.json()) == limit
        assert following == ("true", f"0:{limit}:0")
    shown, cursor, reads = [], "", []
    while True:
        answer, read, (more, cursor) = page(lookout, limit="7", cursor=cursor)
        shown += [row["eventID"] for row in answer.json()]
        reads.append(read)
        if more != "true":
            break
    assert shown == ids[::-1] and reads == [7, 7, 7, 4]
    oldest, _, _ = page(lookout, limit="3", sort="timestamp")
    assert [row["eventID"] for row in oldest.json()] == ids[:3]


def test_a_query_reads_at_most_its_share_per_row_and_its_cursor_goes_on(lookout: Any) -> None:
    ids = lookout[3]
    nothing, read, following = page(lookout, limit="2", query="shard:z")
    assert nothing.json() == [] and read == SCAN_PER_ROW * 2 < STORED and following == ("true", f"0:{SCAN_PER_ROW * 2}:0")
    shown, cursor = [], ""
    while True:
        answer, read, (more, cursor) = page(lookout, limit="2", query="shard:a", cursor=cursor)
        assert read <= SCAN_PER_ROW * 2
        shown += [row["eventID"] for row in answer.json()]
        if more != "true":
            break
    assert shown == [ids[number] for number in SHARD_A[::-1]]


def test_one_token_has_at_most_two_lists_running_while_another_token_is_served(lookout: Any) -> None:
    found, client, path, _ids = lookout
    held, release, lock = threading.Semaphore(0), threading.Event(), threading.Lock()
    holding = [0]

    def hold(_connection: Any, _cursor: Any, sql: str, *_rest: Any) -> None:
        """Keep the first HEAVY_AT_ONCE lists inside their read of the events (in their worker threads)."""
        if "inbox_event.payload" not in sql:
            return
        with lock:
            if holding[0] >= HEAVY_AT_ONCE:
                return
            holding[0] += 1
        held.release()
        release.wait(10)

    answers: list[httpx.Response] = []
    sqlalchemy.event.listen(found.engine, "before_cursor_execute", hold)
    try:
        running = [threading.Thread(target=lambda: answers.append(client.get(path, headers=as_(found))))
                   for _ in range(HEAVY_AT_ONCE)]
        for thread in running:
            thread.start()
        for _ in running:
            assert held.acquire(timeout=10), "the lists did not start"
        refused = client.get(path, headers=as_(found))
        served_meanwhile = client.get(path, headers=as_(found, "ada"))  # the same user's other token
    finally:
        release.set()
        for thread in running:
            thread.join(10)
        sqlalchemy.event.remove(found.engine, "before_cursor_execute", hold)  # (not while a statement runs it)
    assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
    assert refused.json()["detail"].startswith(f"This token already has {HEAVY_AT_ONCE} heavy requests")
    assert served_meanwhile.status_code == 200 and len(served_meanwhile.json()) == STORED
    assert [answer.status_code for answer in answers] == [200] * HEAVY_AT_ONCE
    assert client.get(path, headers=as_(found)).status_code == 200  # once they have answered
