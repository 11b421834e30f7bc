"""Leases on SQLite and PostgreSQL: one holder at a time, renewal, expiry, release, races."""

from __future__ import annotations

import threading

import sqlalchemy

from reflex_lookout.background import Lease


def test_one_holder_at_a_time_until_it_expires_or_is_released(engine: sqlalchemy.Engine) -> None:
    now = [1000.0]
    first = Lease(engine, "forwarder", "first", ttl_s=10.0, clock=lambda: now[0])
    second = Lease(engine, "forwarder", "second", ttl_s=10.0, clock=lambda: now[0])
    assert first.hold() and not second.hold()
    now[0] += 8
    assert first.hold() and not second.hold()  # renewed: good for 10 s from now
    now[0] += 9
    assert not second.hold()
    now[0] += 2  # the first holder stopped renewing (a killed worker): its lease has run out
    assert second.hold() and not first.hold() and not first.held
    second.release()
    assert first.hold()
    assert Lease(engine, "inbox-feeder", "second", clock=lambda: now[0]).hold()  # another lease, its own holder


def test_keep_renews_only_every_few_seconds(engine: sqlalchemy.Engine) -> None:
    now = [1000.0]
    lease = Lease(engine, "forwarder", "me", ttl_s=10.0, clock=lambda: now[0])
    assert lease.keep()
    with engine.connect() as connection:
        def until() -> object:
            return connection.execute(sqlalchemy.text("select until from worker_lease")).scalar()

        assert until() == 1010.0
        now[0] += 1
        assert lease.keep() and until() == 1010.0  # not written again yet
        connection.rollback()
        now[0] += 2
        assert lease.keep() and until() == 1013.0


def test_racing_takers_leave_exactly_one_holder(engine: sqlalchemy.Engine) -> None:
    takers = [Lease(engine, "forwarder", f"worker-{n}") for n in range(8)]
    results: list[bool] = []
    start = threading.Barrier(len(takers))

    def take(lease: Lease) -> None:
        start.wait()
        results.append(lease.hold())

    threads = [threading.Thread(target=take, args=(lease,)) for lease in takers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 7 + [True]
    with engine.connect() as connection:
        holder = connection.execute(sqlalchemy.text("select holder from worker_lease")).scalar()
    assert holder == next(lease.holder for lease in takers if lease.held)
