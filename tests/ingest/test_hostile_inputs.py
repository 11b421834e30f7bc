"""Large and deep inputs through the whole local path — the tunnel and the ingest endpoints, the
outbox, the feeder, the inbox's reads — on a real SQLite file: never a 5xx, never a dead feeder,
and every envelope accepted is either read into the inbox or rejected with its reason."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy
from hypothesis import HealthCheck, given, settings, strategies as st

from app import db
from app.inbox.search import IssueSearch
from app.inbox.tables import READ
from app.inbox.trace_reading import TraceReader
from app.ingest.endpoints import Ingest
from app.ingest.feeder import REJECTED, InboxFeeder
from app.ingest.store import InboxStore
from app.settings import Settings
from plugin_support.envelopes import build
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.protocol.ratelimits import RateLimits
from reflex_lookout.stats import TunnelStats
from reflex_lookout.tables import OUTBOX
from reflex_lookout.tunnel import Tunnel
from tests.environment import LOCAL_ENV

SETTINGS = Settings.from_env(LOCAL_ENV)
DSN = str(SETTINGS.local_dsn)
KEY = SETTINGS.local_dsn.public_key
PROJECT = SETTINGS.local_dsn.project_id


class LocalPath:
    """The local path on one SQLite file, driven by hand: post, then feed."""

    def __init__(self, engine: sqlalchemy.Engine) -> None:
        self.engine = engine
        self.store = OutboxStore(engine)
        self.inbox = InboxStore(engine)
        self.inbox.ensure_project(SETTINGS.local_dsn)
        self.tunnel = Tunnel(SETTINGS, self.store, RateLimits(), TunnelStats())
        self.ingest = Ingest(self.tunnel, self.inbox)
        self.feeder = InboxFeeder(self.store, self.inbox)

    def client(self) -> httpx.AsyncClient:
        app = self.ingest.asgi(self.tunnel.asgi())
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:3000")

    def feed(self) -> None:
        while self.feeder.feed_once():
            pass

    def unaccounted(self) -> list[int]:
        """Local rows neither read into the inbox nor rejected with a reason."""
        with self.engine.connect() as connection:
            return list(connection.execute(
                sqlalchemy.select(OUTBOX.c.id).where(
                    OUTBOX.c.status != REJECTED,
                    ~sqlalchemy.exists().where(READ.c.outbox_id == OUTBOX.c.id),
                )
            ).scalars())


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalPath]:
    engine = db.engine(f"sqlite:///{tmp_path_factory.mktemp('hostile') / 'hostile.db'}")
    db.migrate(engine)
    yield LocalPath(engine)


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


NON_FINITE = ["Infinity", "-Infinity", "NaN", "1e999"]


@st.composite
def hostile_item(draw: st.DrawFn) -> tuple[str, bytes]:
    """One item of an envelope, as raw JSON text, hostile in one or more ways."""
    kind = draw(st.sampled_from(["event", "transaction", "log", "feedback"]))
    long = "x" * draw(st.sampled_from([10, 20_000, 300_000, 1_000_000]))  # no "@", no spaces: regex food
    depth = draw(st.sampled_from([1, 500, 5_000, 200_000]))
    number = draw(st.sampled_from(["1.5", *NON_FINITE]))
    if kind == "event":
        text = (f'{{"event_id":"{uuid.uuid4().hex}","message":"{long}","timestamp":{number},'
                f'"extra":{{"deep":{nested(depth)}}},'
                f'"exception":{{"values":[{{"type":"E{long[:5000]}","value":"{long}"}}]}}}}')
    elif kind == "transaction":
        spans = ",".join(f'{{"span_id":"{i:016x}","parent_span_id":"{i - 1:016x}","start_timestamp":1,"timestamp":{number}}}'
                         for i in range(1, draw(st.sampled_from([2, 3000]))))
        text = (f'{{"event_id":"{uuid.uuid4().hex}","type":"transaction","transaction":"{long}","start_timestamp":1,'
                f'"timestamp":{number},"contexts":{{"trace":{{"trace_id":"{"a" * 32}","span_id":"{0:016x}"}}}},'
                f'"spans":[{spans}]}}')
    elif kind == "log":
        lines = ",".join(f'{{"timestamp":{number},"level":"error","body":"{long[:100_000]}"}}'
                         for _ in range(draw(st.sampled_from([1, 50]))))
        text = f'{{"items":[{lines}]}}'
    else:
        text = f'{{"type":"feedback","contexts":{{"feedback":{{"message":"{long}","extra":{nested(depth)}}}}}}}'
    return kind, text.encode()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow, HealthCheck.data_too_large])
@given(items=st.lists(hostile_item(), min_size=1, max_size=3), route=st.sampled_from(["tunnel", "envelope"]),
       compress=st.booleans())
@pytest.mark.anyio
async def test_hostile_envelopes_get_an_answer_and_every_accepted_one_is_accounted_for(
        local: LocalPath, items: list[tuple[str, bytes]], route: str, compress: bool) -> None:
    body = build(DSN, items)
    headers = {"Content-Type": "application/x-sentry-envelope"}
    if compress:
        body, headers["Content-Encoding"] = gzip.compress(body, 1), "gzip"
    path = SETTINGS.tunnel_path if route == "tunnel" else f"/api/{PROJECT}/envelope/?sentry_key={KEY}"
    async with local.client() as client:
        answer = await client.post(path, content=body, headers=headers)
    assert answer.status_code < 500, answer.text
    if answer.status_code != 200:
        assert answer.json()["detail"].endswith("."), answer.text
    local.feed()  # raises if the feeder would die on a row
    assert local.unaccounted() == []
    # Every read of the console pages still works over what was stored.
    IssueSearch(local.engine).search("")
    TraceReader(local.engine).transactions(50, 0, "")
    TraceReader(local.engine).logs(200, "", "")


@pytest.mark.anyio
async def test_a_normal_event_after_the_hostile_ones_is_in_the_inbox(local: LocalPath) -> None:
    marker = uuid.uuid4().hex
    async with local.client() as client:
        poison = build(DSN, [("event", ('{"extra":' + nested(200_000) + "}").encode())])
        await client.post(SETTINGS.tunnel_path, content=gzip.compress(poison), headers={"Content-Encoding": "gzip"})
        answer = await client.post(SETTINGS.tunnel_path, content=build(DSN, [(
            "event", json.dumps({"event_id": uuid.uuid4().hex, "message": marker}).encode())]))
    assert answer.status_code == 200
    local.feed()
    found = IssueSearch(local.engine).search(marker).issues
    assert [issue["title"] for issue in found] == [marker]
