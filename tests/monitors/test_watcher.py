"""app/monitors/watcher.py: the pass that notices a job that never checked in, or overran, driven by
its `now`; each state change alerts, and the real sentry-sdk's ok check-in recovers the monitor."""

from __future__ import annotations

import asyncio
import time

import pytest
import sqlalchemy

from app.alerts import rules as alert_rules
from app.ingest.store import InboxStore
from app.monitors.watcher import MonitorWatcher, watch
from app.settings import Settings
from app.wiring import Lookout
from reflex_lookout.background import Lease
from reflex_lookout.tables import WORKER_LEASE
from tests.monitors.helpers import EVERY_MINUTE, alerts, check_in, checkins, monitor, run_job

pytestmark = pytest.mark.anyio


def test_a_job_that_never_checks_in_again_is_missed_once_its_deadline_passes(inbox: InboxStore) -> None:
    run_job(inbox, "every-minute", EVERY_MINUTE)
    due = monitor(inbox.engine, "every-minute").next_expected_at
    assert watch(inbox.engine, due + 59).missed == 0  # within the one-minute margin
    assert monitor(inbox.engine, "every-minute").state == "ok" and alerts(inbox.engine) == []

    passed = watch(inbox.engine, due + 61)
    assert (passed.missed, passed.changes) == (1, 1)
    found = monitor(inbox.engine, "every-minute")
    assert (found.state, found.last_state_change_at, found.next_expected_at) == ("missed", due + 61, due + 121)
    assert [(r.status, r.started_at) for r in checkins(inbox.engine, "every-minute")][-1] == ("missed", due)
    [(rule, title, reason)] = alerts(inbox.engine)
    assert (rule, title) == ("missed", "Monitor every-minute: missed")
    assert reason.startswith("The monitor every-minute missed its check-in expected at ")
    assert reason.endswith(" UTC (margin 1 min).")

    assert watch(inbox.engine, due + 100).missed == 0  # not due again yet
    passed = watch(inbox.engine, due + 200)  # missed again: a row, no second alert
    assert (passed.missed, passed.changes) == (1, 0) and len(alerts(inbox.engine)) == 1

    run_job(inbox, "every-minute", EVERY_MINUTE)  # the job is back
    assert monitor(inbox.engine, "every-minute").state == "ok"
    assert [a[0] for a in alerts(inbox.engine)] == ["missed", "recovered"]
    assert alerts(inbox.engine)[1][2].endswith(", after it was missed.")


def test_a_run_longer_than_max_runtime_times_out(inbox: InboxStore) -> None:
    sent = check_in(inbox, "slow", "in_progress", config=EVERY_MINUTE)  # max_runtime: 2 minutes
    started = checkins(inbox.engine, "slow")[0].started_at
    assert watch(inbox.engine, started + 110).timeouts == 0
    passed = watch(inbox.engine, started + 121)
    assert passed.timeouts == 1
    assert monitor(inbox.engine, "slow").state == "timeout"
    assert [r.status for r in checkins(inbox.engine, "slow")][0] == "timeout"
    assert [a[0] for a in alerts(inbox.engine)][-1] == "timeout"
    assert "run that started at" in alerts(inbox.engine)[-1][2] and "after 2 min" in alerts(inbox.engine)[-1][2]
    check_in(inbox, "slow", "ok", check_in_id=sent)  # it did finish, late
    assert monitor(inbox.engine, "slow").state == "ok" and alerts(inbox.engine)[-1][0] == "recovered"


def test_a_monitor_without_a_schedule_is_never_missed(inbox: InboxStore) -> None:
    check_in(inbox, "whenever", "ok")
    assert watch(inbox.engine, time.time() + 365 * 86400).missed == 0
    assert monitor(inbox.engine, "whenever").state == "ok"


async def test_the_watcher_passes_only_while_it_holds_the_lease(inbox: InboxStore) -> None:
    run_job(inbox, "leased", EVERY_MINUTE)
    due = monitor(inbox.engine, "leased").next_expected_at
    woken: list[bool] = []
    first = MonitorWatcher(inbox.engine, Lease(inbox.engine, "monitor-watcher", holder="w1"),
                           on_alert=lambda: woken.append(True))
    second = MonitorWatcher(inbox.engine, Lease(inbox.engine, "monitor-watcher", holder="w2"))
    passed = await first.step(due + 61)
    assert passed is not None and passed.missed == 1 and woken == [True]
    assert await second.step(due + 200) is None  # w1 holds the lease
    assert monitor(inbox.engine, "leased").state == "missed"




async def test_the_running_watcher_passes_on_its_own_and_lets_the_lease_go_when_stopped(inbox: InboxStore) -> None:
    run_job(inbox, "looping", EVERY_MINUTE)
    watcher = MonitorWatcher(inbox.engine, Lease(inbox.engine, "monitor-watcher", holder="w1"), interval_s=0.05)
    task = asyncio.create_task(watcher.run())
    for _ in range(200):
        if watcher.passes >= 2:
            break
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert watcher.passes >= 2 and watcher.failures == 0
    with inbox.engine.connect() as connection:
        held = connection.execute(WORKER_LEASE.select().where(WORKER_LEASE.c.name == "monitor-watcher")).first()
    assert held is not None and held.holder == "w1" and held.until == 0.0  # given up


async def test_the_backend_starts_the_watcher_beside_the_alert_sender(engine: sqlalchemy.Engine) -> None:
    lookout = Lookout(Settings.from_env({}), engine)
    async with lookout.run_inbox():
        assert lookout.monitor_watcher is not None and lookout.sender is not None
        assert lookout.monitor_watcher.on_alert == lookout.sender.wake
        for _ in range(100):
            if lookout.monitor_watcher.passes:
                break
            await asyncio.sleep(0.05)
        assert lookout.monitor_watcher.passes >= 1  # its first pass at once


def test_a_flapping_monitor_alerts_once_per_quiet_period_each_way(inbox: InboxStore) -> None:
    """Missed, back, missed again, back again, all within the project's quiet period (30 min by
    default): one missed and one recovered alert, as an issue alerts once per rule per quiet period."""
    for _ in range(2):
        run_job(inbox, "flappy", EVERY_MINUTE)
        due = monitor(inbox.engine, "flappy").next_expected_at
        assert watch(inbox.engine, due + 61).changes == 1
    run_job(inbox, "flappy", EVERY_MINUTE)
    assert monitor(inbox.engine, "flappy").state == "ok"
    assert [a[0] for a in alerts(inbox.engine)] == ["missed", "recovered"]
    with inbox.engine.begin() as connection:  # a project whose quiet period is off alerts on every change
        alert_rules.save(connection, 1, alert_rules.Rules(quiet_minutes=0))
    due = monitor(inbox.engine, "flappy").next_expected_at
    watch(inbox.engine, due + 61)
    run_job(inbox, "flappy", EVERY_MINUTE)
    assert [a[0] for a in alerts(inbox.engine)] == ["missed", "recovered", "missed", "recovered"]
