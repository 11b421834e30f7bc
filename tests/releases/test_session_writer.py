"""app/releases/session_writer.py: the real sentry-sdk's sessions (application mode: one per session,
updated; request mode: aggregates) counted as Relay counts them, on SQLite and PostgreSQL; and the
sessions no count takes (no release, too old, a flood of groups)."""

from __future__ import annotations

import json
import time

import sqlalchemy
from sqlalchemy import select

from app.ingest.incoming import Readable
from app.ingest.issue_keys import keys_of
from app.ingest.store import InboxStore
from app.releases import session_writer
from app.releases.tables import SESSIONS
from plugin_support.envelopes import build
from tests.environment import LOCAL_DSN
from tests.releases.sessions import ABNORMAL, CRASHED, ERRORED, HEALTHY, Session, run_sessions


def rows(engine: sqlalchemy.Engine) -> list[tuple]:
    with engine.connect() as connection:
        return connection.execute(select(SESSIONS.c.key, SESSIONS.c.release, SESSIONS.c.environment, SESSIONS.c.did,
                                         SESSIONS.c.sessions, SESSIONS.c.errored, SESSIONS.c.abnormal,
                                         SESSIONS.c.crashed).order_by(SESSIONS.c.id)).tuples().all()


def totals(engine: sqlalchemy.Engine) -> tuple[int, int, int, int]:
    found = rows(engine)
    return tuple(sum(row[i] for row in found) for i in (4, 5, 6, 7))  # type: ignore[return-value]


def session_envelope(*updates: dict) -> bytes:
    return build(None, [("session", json.dumps(update).encode()) for update in updates])


def update(sid: str, **fields: object) -> dict:
    return {"sid": sid, "started": time.time() - 5, "attrs": {"release": "shop@1.0", "environment": "production"},
            **fields}


def test_application_sessions_are_one_row_each_with_how_they_ended(inbox: InboxStore) -> None:
    run_sessions(inbox, [Session(HEALTHY, "u-1"), Session(ERRORED, "u-2"), Session(CRASHED, "u-3"),
                         Session(ABNORMAL, "u-1"), Session(HEALTHY)])
    found = rows(inbox.engine)
    assert [row[4:] for row in found] == [(1, 0, 0, 0), (1, 1, 0, 0), (1, 0, 0, 1), (1, 0, 1, 0), (1, 0, 0, 0)]
    assert all(key.startswith("s:") and len(key) == 38 for key, *_ in found)  # "s:" and the SDK's uuid
    assert {(release, environment) for _k, release, environment, *_ in found} == {("shop@1.0", "production")}
    dids = [row[3] for row in found]
    assert dids[0] == dids[3] != dids[1] and dids[4] == ""  # one user twice; a session without one
    assert all(len(d) == 32 and "u-" not in d for d in dids[:4])  # hashed: the id itself is not kept


def test_request_mode_aggregates_are_added_by_minute(inbox: InboxStore) -> None:
    run_sessions(inbox, [], requests=[HEALTHY, HEALTHY, ERRORED, CRASHED, HEALTHY])
    run_sessions(inbox, [], requests=[HEALTHY, ERRORED])
    found = rows(inbox.engine)
    assert all(key.startswith("a:") for key, *_ in found)
    assert totals(inbox.engine) == (7, 2, 0, 1)
    assert len(found) <= 2  # the same minute's groups are one row (two when the minute turned between)


def test_a_sessions_updates_merge_into_one_row_whatever_their_order(inbox: InboxStore) -> None:
    started = update("a" * 32, init=True, status="ok")
    inbox.ingest_envelope(session_envelope(update("a" * 32, status="crashed", errors=1), started), dsn=LOCAL_DSN)
    inbox.ingest_envelope(session_envelope(update("a" * 32, status="exited", errors=1)), dsn=LOCAL_DSN)
    inbox.ingest_envelope(session_envelope(update("b" * 32, init=True, status="ok", errors=0),
                                           update("b" * 32, status="ok", errors=2),
                                           update("b" * 32, status="exited", errors=2, did="u-9")), dsn=LOCAL_DSN)
    assert [row[4:] for row in rows(inbox.engine)] == [(1, 0, 0, 1), (1, 1, 0, 0)]
    assert rows(inbox.engine)[1][3] != ""  # a user named by a later update is kept


def test_an_update_without_its_init_is_not_a_started_session(inbox: InboxStore) -> None:
    inbox.ingest_envelope(session_envelope(update("c" * 32, status="errored")), dsn=LOCAL_DSN)
    assert [row[4:] for row in rows(inbox.engine)] == [(0, 1, 0, 0)]  # Relay counts it errored, not started


def test_sessions_without_a_release_or_too_old_are_not_counted(inbox: InboxStore) -> None:
    no_release = {**update("d" * 32, init=True), "attrs": {"environment": "production"}}
    old = update("e" * 32, init=True, started=time.time() - session_writer.MAX_AGE - 60)
    ahead = update("f" * 32, init=True, started=time.time() + 3600)
    inbox.ingest_envelope(session_envelope(no_release, old, ahead), dsn=LOCAL_DSN)
    [(key, *_)] = rows(inbox.engine)
    assert key == "s:" + "f" * 32  # a clock ahead: counted when received
    with inbox.engine.connect() as connection:
        assert connection.execute(select(SESSIONS.c.started)).scalar_one() <= time.time()


def test_hostile_sessions_are_bounded(inbox: InboxStore) -> None:
    groups = [{"started": time.time(), "did": f"user-{i}", "exited": 1} for i in range(session_writer.MAX_GROUPS + 50)]
    groups.append({"started": time.time(), "exited": -5, "crashed": "many", "errored": 1e300})
    flood = {"attrs": {"release": "r" * 500, "environment": "<b>prod</b>"}, "aggregates": groups}
    inbox.ingest_envelope(build(None, [("sessions", json.dumps(flood).encode()),
                                     ("session", json.dumps(update("<script>" * 40, init=True)).encode())]),
                          dsn=LOCAL_DSN)
    found = rows(inbox.engine)
    assert len(found) == session_writer.MAX_GROUPS + 1
    assert {len(release) for _k, release, *_ in found[:-1]} == {200}
    assert found[-1][0] == "s:" + ("<script>" * 40)[:session_writer.SID_LENGTH]


def test_parallel_feeders_lock_the_session_rows_an_envelope_writes() -> None:
    """On PostgreSQL two feeders may write at once (app/ingest/issue_keys.py): two envelopes updating one
    session want one key, another session's envelope none of it, and a client report keys of its own."""
    now = time.time()

    def keys(*items: tuple[str, dict]) -> frozenset[int]:
        return keys_of(Readable(1, now, None, [(item_type, payload, None) for item_type, payload in items]))

    first, later = keys(("session", update("a" * 32, init=True))), keys(("session", update("a" * 32, status="exited")))
    assert first == later and len(first) == 1
    assert keys(("session", update("b" * 32, init=True))).isdisjoint(first)
    groups = {"attrs": {"release": "shop@1.0"}, "aggregates": [{"started": now, "exited": 1, "did": d} for d in "xy"]}
    assert len(keys(("sessions", groups))) == 2  # one row per user of that minute
    assert keys(("session", {"sid": "c", "attrs": {}})) == frozenset()  # no release: nothing written
    report = {"discarded_events": [{"reason": "queue_overflow", "category": "error", "quantity": 1}]}
    assert len(keys(("client_report", report))) == 1


def test_the_browser_sdks_unhandled_status_is_an_errored_session_not_a_crash(inbox: InboxStore) -> None:
    """@sentry/browser (10 and later) ends a session with an unhandled error as "unhandled": the page lives on."""
    inbox.ingest_envelope(session_envelope(update("d" * 32, init=True, status="ok"),
                                           update("d" * 32, status="unhandled", errors=1)), dsn=LOCAL_DSN)
    groups = {"attrs": {"release": "shop@1.0"}, "aggregates": [{"started": time.time(), "exited": 2, "unhandled": 3}]}
    inbox.ingest_envelope(build(None, [("sessions", json.dumps(groups).encode())]), dsn=LOCAL_DSN)
    assert totals(inbox.engine) == (6, 4, 0, 0)
