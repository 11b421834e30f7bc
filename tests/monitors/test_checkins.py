"""app/monitors/checkins.py: the real sentry-sdk's check-ins (`@sentry_sdk.crons.monitor`,
`capture_checkin`) stored through the inbox's writer, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy

from app import db
from app.ingest.store import InboxStore
from app.monitors import checkins as checkin_writer
from app.monitors.tables import CHECKINS, MONITORS
from tests.factories import as_of_revision, query
from tests.monitors.helpers import EVERY_MINUTE, alerts, check_in, checkins, monitor, run_job


def test_a_job_that_succeeds_makes_one_ok_check_in_and_its_monitor(inbox: InboxStore) -> None:
    run_job(inbox, "nightly-export", EVERY_MINUTE)
    found = monitor(inbox.engine, "nightly-export")
    assert (found.state, found.schedule_type, found.schedule_value, found.schedule_unit,
            found.checkin_margin_min, found.max_runtime_min) == ("ok", "interval", "1", "minute", 1, 2)
    [row] = checkins(inbox.engine, "nightly-export")  # in_progress, then ok: the same row
    assert (row.status, row.environment, row.release, len(row.check_in_id), len(row.trace_id)) == (
        "ok", "production", "shop@2.1", 32, 32)
    assert row.duration is not None and 0 <= row.duration < 5
    assert found.next_expected_at == row.started_at + 60 and found.last_checkin_at == row.received_at
    assert alerts(inbox.engine) == []  # new → ok alerts no one


def test_a_job_that_raises_makes_an_error_check_in_and_a_failed_alert(inbox: InboxStore) -> None:
    run_job(inbox, "billing", EVERY_MINUTE, fails=True)
    assert monitor(inbox.engine, "billing").state == "error"
    assert [r.status for r in checkins(inbox.engine, "billing")] == ["error"]
    [(rule, title, reason)] = alerts(inbox.engine)
    assert (rule, title) == ("failed", "Monitor billing: error")
    assert reason.startswith("The monitor billing checked in with an error at ") and reason.endswith(" UTC.")

    run_job(inbox, "billing", EVERY_MINUTE)  # it runs fine again: recovered
    assert monitor(inbox.engine, "billing").state == "ok"
    assert [r.status for r in checkins(inbox.engine, "billing")] == ["error", "ok"]
    assert [a[0] for a in alerts(inbox.engine)] == ["failed", "recovered"]
    assert alerts(inbox.engine)[1][2].endswith(", after it was error.")


def test_a_check_in_without_config_makes_a_monitor_with_no_schedule_and_config_later_sets_it(
        inbox: InboxStore) -> None:
    sent = check_in(inbox, "adhoc", "in_progress")
    found = monitor(inbox.engine, "adhoc")
    assert (found.state, found.schedule_type, found.next_expected_at) == ("new", "", None)
    check_in(inbox, "adhoc", "ok", config={"schedule": {"type": "crontab", "value": "*/5 * * * *"}},
             check_in_id=sent)
    found = monitor(inbox.engine, "adhoc")
    assert (found.state, found.schedule_type, found.schedule_value) == ("ok", "crontab", "*/5 * * * *")
    assert found.next_expected_at is not None and found.next_expected_at % 300 == 0
    assert [r.status for r in checkins(inbox.engine, "adhoc")] == ["ok"]


def test_a_config_that_does_not_parse_keeps_the_schedule_and_a_bad_check_in_is_dropped(inbox: InboxStore) -> None:
    check_in(inbox, "kept", "ok", config=EVERY_MINUTE)
    check_in(inbox, "kept", "ok", config={"schedule": {"type": "crontab", "value": "whenever"}})
    assert monitor(inbox.engine, "kept").schedule_type == "interval"
    with inbox.engine.begin() as connection:
        assert not checkin_writer.write_checkin(connection, 1, {"monitor_slug": "kept", "status": "maybe"}, 1.0)
        assert not checkin_writer.write_checkin(connection, 1, {"monitor_slug": " ", "status": "ok"}, 1.0)
    assert len(checkins(inbox.engine, "kept")) == 2


def test_a_run_that_starts_a_little_early_fills_its_slot_and_the_next_is_the_one_after(inbox: InboxStore) -> None:
    """An hourly crontab job whose cron started it half a second before 12:00 was counted for 12:00, so
    the next run is expected at 13:00 and the watcher does not mark 12:00 missed."""
    hourly = {"schedule": {"type": "crontab", "value": "0 * * * *"}, "checkin_margin": 1, "timezone": "UTC"}
    noon = datetime(2026, 11, 29, 12, tzinfo=UTC).timestamp()

    def run_at(at: float, **more: object) -> float:
        with inbox.engine.begin() as connection:
            checkin_writer.write_checkin(connection, 1, {"monitor_slug": "hourly", "status": "ok", **more}, at)
        return monitor(inbox.engine, "hourly").next_expected_at

    assert run_at(noon - 3600 + 2, monitor_config=hourly) == noon  # 11:00:02
    assert run_at(noon - 0.5) == noon + 3600  # 11:59:59.5 was 12:00's run: 13:00 next, not 12:00 again
    assert run_at(noon + 1800) == noon + 3600  # an extra run at 12:30: the next slot stays
    assert run_at(noon + 3600 - checkin_writer.EARLY_S - 1) == noon + 3600  # 12:58:59: too early to be 13:00's


def test_monitors_and_check_ins_are_capped(inbox: InboxStore, monkeypatch) -> None:
    monkeypatch.setattr(checkin_writer, "MAX_MONITORS", 3)
    monkeypatch.setattr(checkin_writer, "CHECKINS_KEPT", 4)
    with inbox.engine.begin() as connection:
        for n in range(5):
            checkin_writer.write_checkin(connection, 1, {"monitor_slug": f"job-{n}", "status": "ok"}, 10.0 + n)
        kept = [checkin_writer.write_checkin(connection, 1, {"monitor_slug": "job-0", "status": "ok"}, 20.0 + n)
                for n in range(6)]
        checkin_writer.keep_newest(connection, 1, kept=4)
    assert all(kept)
    assert [slug for (slug,) in query(inbox, "select slug from inbox_monitor order by id")] == ["job-0", "job-1", "job-2"]
    assert [r.received_at for r in checkins(inbox.engine, "job-0")] == [22.0, 23.0, 24.0, 25.0]


def test_migration_0026_adds_the_tables_and_its_downgrade_drops_them(inbox: InboxStore) -> None:
    with as_of_revision(inbox.engine, "0025_feedback_url_release"):
        run_job(inbox, "before-downgrade", EVERY_MINUTE)
    tables = sqlalchemy.inspect(inbox.engine).get_table_names()
    assert MONITORS.name not in tables and CHECKINS.name not in tables
    db.migrate(inbox.engine)
    run_job(inbox, "after-upgrade", EVERY_MINUTE)
    assert monitor(inbox.engine, "after-upgrade").state == "ok"
