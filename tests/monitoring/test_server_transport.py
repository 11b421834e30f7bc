"""The server SDK's transport: sentry-sdk's envelopes committed to a real SQLite outbox, delivered
by the real forwarder to a real upstream, and kept while that upstream is down."""

from __future__ import annotations

import asyncio
import threading

import pytest
import sentry_sdk
import sqlalchemy

from app.settings import Settings
from plugin_support.helpers import accepted, sentry_settings, until
from plugin_support.upstream import Upstream
from reflex_lookout import server
from reflex_lookout.outbox import LOCAL, PENDING, OutboxStore
from reflex_lookout.server_transport import OutboxTransport
from tests.e2e.captured import parse_envelope
from tests.environment import LOCAL_ENV


def rows(engine: sqlalchemy.Engine) -> list[tuple]:
    with engine.connect() as connection:
        return list(connection.execute(sqlalchemy.text(
            "select status, dsn, categories, event_id, body from outbox order by id"
        )))


def start_sdk(sentry_init, settings: Settings, transport_for) -> OutboxTransport:
    options = server.server_options(settings)
    transport = transport_for(options)
    sentry_init(transport=transport, **options)
    return transport


def test_local_mode_commits_each_envelope_as_an_inbox_row(sentry_init, engine: sqlalchemy.Engine) -> None:
    settings = Settings.from_env(LOCAL_ENV)
    transport = start_sdk(sentry_init, settings, lambda o: OutboxTransport(o, OutboxStore(engine), True, 10**9))
    event_id = sentry_sdk.capture_message("Lookout test: from the server")
    sentry_sdk.flush(5)
    [(status, dsn, categories, stored_id, body)] = rows(engine)
    assert (status, dsn, categories, stored_id) == (LOCAL, "http://lookout@localhost/1", "error", event_id)
    [event] = parse_envelope(body).payloads("event")
    assert event["message"] == "Lookout test: from the server" and event["platform"] == "python"
    assert transport.stored == 1 and transport.dropped == {}


def test_the_queue_holds_transport_queue_size_envelopes_and_counts_what_it_drops(
    sentry_init, engine: sqlalchemy.Engine
) -> None:
    release = threading.Event()

    class SlowStore(OutboxStore):
        def add_many(self, rows, connection=None):  # as OutboxStore
            release.wait(10)
            super().add_many(rows, connection)

    settings = Settings.from_env(LOCAL_ENV)
    transport = start_sdk(
        sentry_init, settings, lambda o: OutboxTransport({**o, "transport_queue_size": 3}, SlowStore(engine), True, 10**9)
    )
    for n in range(10):
        sentry_sdk.capture_message(f"Lookout test: queued {n}")
    release.set()
    sentry_sdk.flush(5)
    stored = len(rows(engine))
    assert transport.dropped.get("queue_overflow", 0) >= 10 - 3 - 1  # 3 queued, at most 1 being stored
    assert stored + transport.dropped["queue_overflow"] == 10 and stored == transport.stored


def test_an_outbox_over_its_cap_takes_nothing_more(sentry_init, engine: sqlalchemy.Engine) -> None:
    settings = Settings.from_env(LOCAL_ENV)
    transport = start_sdk(sentry_init, settings, lambda o: OutboxTransport(o, OutboxStore(engine), True, 100))
    sentry_sdk.capture_message("Lookout test: no room")
    sentry_sdk.flush(5)
    assert rows(engine) == [] and transport.dropped == {"outbox_full": 1}


@pytest.mark.anyio
async def test_sentry_mode_keeps_envelopes_while_upstream_is_down_and_delivers_each_once(
    sentry_init, make_pipeline, upstream: Upstream
) -> None:
    settings = sentry_settings(upstream)
    pipeline = await make_pipeline(settings)
    loop = asyncio.get_running_loop()

    def woken(dsn: str) -> None:
        loop.call_soon_threadsafe(pipeline.forwarder.wake, dsn)

    start_sdk(sentry_init, settings, lambda o: OutboxTransport(o, pipeline.store, False, 10**9, on_commit=woken))
    upstream.stop()
    sent = [sentry_sdk.capture_message(f"Lookout test: while down {n}") for n in range(5)]
    await asyncio.to_thread(sentry_sdk.flush, 5)
    stored = rows(pipeline.store.engine)
    assert [r[0] for r in stored] == [PENDING] * 5 and {r[3] for r in stored} == set(sent)
    await asyncio.sleep(0.5)  # the forwarder tries, and fails: nothing may be lost
    assert len(rows(pipeline.store.engine)) == 5 and upstream.accepted == []
    upstream.start()
    delivered = await accepted(upstream, 5)
    await until(lambda: rows(pipeline.store.engine) == [])
    ids = sorted(parse_envelope(r.body).payloads("event")[0]["event_id"] for r in delivered)
    assert ids == sorted(sent)
    assert all(r.headers["x-sentry-auth"].startswith("Sentry ") for r in delivered)


def test_local_mode_writes_the_servers_envelopes_scrubbed_never_as_sent(
    sentry_init, engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The backend's own reports pass the same step before the write as the tunnel's (issue 35):
    Lookout's ingest gives the runtime's tunnel its `prepare`, and the transport asks the runtime."""
    from app.ingest.endpoints import Ingest
    from app.ingest.store import InboxStore
    from reflex_lookout import runtime
    from reflex_lookout.scrubbing.envelope import SCRUBBED

    monkeypatch.setattr(runtime, "_current", None)  # the runtime made here is this test's alone
    settings = Settings.from_env(LOCAL_ENV)
    made = runtime.Runtime(settings, OutboxStore(engine))
    Ingest(made.tunnel, InboxStore(engine))
    start_sdk(sentry_init, settings,
              lambda o: OutboxTransport(o, made.store, True, 10**9, prepare=made.server_body))
    secret = "server-" + "side-secret-9"
    sentry_sdk.set_extra("api_key", secret)
    sentry_sdk.capture_message("Lookout test: scrubbed before the write")
    sentry_sdk.flush(5)
    [(status, _, _, _, body)] = rows(engine)
    assert status == LOCAL and secret.encode() not in body
    assert parse_envelope(body).header[SCRUBBED] == 1
    [event] = parse_envelope(body).payloads("event")
    assert event["extra"]["api_key"] == "[Filtered]"
