"""Quotas counted in the database across processes (two engines on one database: a SQLite file, and
PostgreSQL), at the edges of their windows (an injected clock), what is counted, and a flood past a
full window refused without asking the database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import select

from app.inbox.tables import QUOTA_COUNTS
from app.ingest.quotas import SHARE, Quotas, events_in
from app.projects.options_store import ProjectOptionsStore
from app.projects.quota_options import QuotaOptions
from reflex_lookout.protocol.asgi import Refused
from tests.environment import LOCAL_DSN
from tests.ingest.helpers import Clock, sqlite_inbox

pytestmark = pytest.mark.anyio
MINUTE = 3600 * 470_000  # a whole minute (and hour) of the epoch
EVENT = ["event"]


def limited(engine: sqlalchemy.Engine, per_minute: int = 0, per_hour: int = 0) -> None:
    ProjectOptionsStore(engine).set_quotas(1, QuotaOptions(per_minute, per_hour))


async def admitted(quotas: Quotas, times: int, items: list[str] = EVENT) -> int:
    """How many of `times` envelopes `quotas` let in."""
    taken = 0
    for _ in range(times):
        try:
            await quotas.admit(LOCAL_DSN, items)
            taken += 1
        except Refused:
            pass
    return taken


def counted(engine: sqlalchemy.Engine) -> list[tuple[int, int, int]]:
    with engine.connect() as connection:
        return [tuple(row) for row in connection.execute(
            select(QUOTA_COUNTS.c.seconds, QUOTA_COUNTS.c.slot, QUOTA_COUNTS.c.count).order_by(QUOTA_COUNTS.c.seconds))]


@pytest.fixture
def second_engine(engine: sqlalchemy.Engine) -> Iterator[sqlalchemy.Engine]:
    """Another engine (its own connections, as another worker's) on the same database."""
    other = sqlalchemy.create_engine(engine.url)
    yield other
    other.dispose()


async def test_two_processes_share_one_count_and_refuse_past_it(
        engine: sqlalchemy.Engine, second_engine: sqlalchemy.Engine, inbox: object) -> None:
    limited(engine, per_minute=10)
    clock = Clock(MINUTE + 5)
    one, other = Quotas(engine, clock), Quotas(second_engine, clock)
    taken = [await admitted(worker, 1) for _ in range(10) for worker in (one, other)]
    assert sum(taken) == 10 and taken[:10] == [1] * 10  # each saw what the other let in
    assert counted(engine) == [(60, MINUTE // 60, 10)]
    with pytest.raises(Refused) as refused:
        await other.admit(LOCAL_DSN, EVENT)
    assert refused.value.status == 429 and refused.value.reason == "over_quota"
    assert refused.value.headers == {"Retry-After": "55",
                                     "X-Sentry-Rate-Limits": "55:error;default;security:project:project_quota"}
    assert "at most 10 events a minute; try again in 55 s" in refused.value.message


async def test_a_worker_asks_the_database_once_per_share_not_per_event(tmp_path: Path) -> None:
    engine = sqlite_inbox(tmp_path)
    limited(engine, per_minute=1000)
    clock = Clock(MINUTE)
    one, other = Quotas(engine, clock), Quotas(sqlalchemy.create_engine(engine.url), clock)
    assert await admitted(one, 100) == 100
    assert counted(engine) == [(60, MINUTE // 60, 1)]  # the first event synced; the next 99 were its share
    assert await admitted(one, 1) == 1  # past its share: it syncs
    assert counted(engine) == [(60, MINUTE // 60, 101)]
    assert await admitted(other, 1) == 1 and counted(engine) == [(60, MINUTE // 60, 102)]
    taken = 102
    for _ in range(1000):
        taken += await admitted(one, 1) + await admitted(other, 1)
    assert 1000 <= taken <= 1000 * (1 + SHARE)  # the documented bound: a share per other worker


async def test_a_window_frees_at_its_edge_and_the_hour_counts_on(tmp_path: Path) -> None:
    engine = sqlite_inbox(tmp_path)
    limited(engine, per_minute=3, per_hour=5)
    clock = Clock(MINUTE + 59.5)
    quotas = Quotas(engine, clock)
    assert await admitted(quotas, 4) == 3
    with pytest.raises(Refused) as refused:
        await quotas.admit(LOCAL_DSN, EVENT)
    assert refused.value.headers["Retry-After"] == "1"  # half a second left: one, never zero
    asked: list[object] = []
    sqlalchemy.event.listen(engine, "begin", listener := asked.append)
    assert await admitted(quotas, 100) == 0 and asked == []  # a flood past a full window: no database work
    sqlalchemy.event.remove(engine, "begin", listener)
    clock.now = MINUTE + 60  # the next minute
    assert await admitted(quotas, 4) == 2  # the hour's 5 are spent
    with pytest.raises(Refused) as refused:
        await quotas.admit(LOCAL_DSN, EVENT)
    assert refused.value.headers["Retry-After"] == str(3600 - 60)
    assert "5 events an hour" in refused.value.message and "a minute" not in refused.value.message
    clock.now = MINUTE + 3600
    assert await admitted(quotas, 1) == 1
    assert [row[:2] for row in counted(engine)] == [(60, (MINUTE + 3600) // 60), (3600, (MINUTE + 3600) // 3600)]


async def test_only_error_events_count_and_no_quota_asks_nothing(tmp_path: Path) -> None:
    assert events_in(["event", "transaction", "attachment", "security", "log", "session"]) == 2
    engine = sqlite_inbox(tmp_path)
    quotas = Quotas(engine, Clock(MINUTE))
    assert await admitted(quotas, 5) == 5 and counted(engine) == []  # no quota: nothing counted
    limited(engine, per_minute=1)
    quotas = Quotas(engine, Clock(MINUTE))
    assert await admitted(quotas, 3, ["transaction", "log"]) == 3
    assert await admitted(quotas, 3) == 1


async def test_with_both_windows_full_the_wait_is_until_the_later_one_ends(tmp_path: Path) -> None:
    """Both the minute and the hour spent at once: the SDK is told to wait for the hour (the later
    window), in Retry-After and in X-Sentry-Rate-Limits alike; waiting only for the minute would be
    refused again at once (issue 36, item 11)."""
    engine = sqlite_inbox(tmp_path)
    limited(engine, per_minute=2, per_hour=2)
    clock = Clock(MINUTE + 10)
    quotas = Quotas(engine, clock)
    assert await admitted(quotas, 3) == 2
    with pytest.raises(Refused) as refused:
        await quotas.admit(LOCAL_DSN, EVENT)
    wait = 3600 - 10  # until the hour ends, not the minute's 50 s
    assert refused.value.headers["Retry-After"] == str(wait)
    assert refused.value.headers["X-Sentry-Rate-Limits"].startswith(f"{wait}:")
    assert "2 events a minute and 2 events an hour" in refused.value.message
