"""Alerts made due by ingest, on a real inbox (SQLite and PostgreSQL): written in the ingest
transaction, per rule, at most once per quiet period; the test alert; pruning of sent alerts."""

from __future__ import annotations

from typing import Any

import pytest
import sqlalchemy

from app.alerts import rules, triggers
from app.alerts.rules import Rules
from app.inbox import states
from app.inbox.triage import Triage
from app.ingest.incoming import Incoming
from app.ingest.store import InboxStore
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope

T0 = 1_800_000_000.0  # the tests' "now": every time is given, none is waited for
MINUTE, DAY = 60.0, 86400.0


def ingest(inbox: InboxStore, at: float, event: dict[str, Any] | None = None, **fields: Any) -> None:
    """One error event received at `at` (by default always of the same issue), with `fields` set."""
    body = event_envelope({**(event or error("'user'")), **fields})
    results = inbox.ingest_batch([Incoming(body, "", at, LOCAL_DSN)])
    assert not any(isinstance(result, Exception) for result in results), results


def alerts(inbox: InboxStore, rule: str | None = None) -> list[dict[str, Any]]:
    with inbox.engine.connect() as connection:
        found = connection.exec_driver_sql("select * from alert order by id").mappings().all()
    return [dict(row) for row in found if rule is None or row["rule"] == rule]


def issue(inbox: InboxStore) -> dict[str, Any]:
    with inbox.engine.connect() as connection:
        return dict(connection.exec_driver_sql("select * from inbox_issue").mappings().one())


def set_rules(inbox: InboxStore, **changed: Any) -> None:
    with inbox.engine.begin() as connection:
        rules.save(connection, 1, Rules(**changed))


def test_a_new_issue_alerts_once_with_the_issue_s_fields(inbox: InboxStore) -> None:
    ingest(inbox, T0, environment="production", release="shop@1.2")
    [alert] = alerts(inbox)
    stored = issue(inbox)
    assert stored["culprit"] == "app.pages.orders in checkout"
    assert {k: alert[k] for k in ("project_id", "issue_id", "rule", "reason", "created_at", "channel_id", "title",
                                  "culprit", "level", "environment", "release", "first_seen", "last_seen",
                                  "event_count")} == {
        "project_id": 1, "issue_id": stored["id"], "rule": "new", "reason": "A new issue.", "created_at": T0,
        "channel_id": None, "title": "KeyError: 'user'", "culprit": stored["culprit"], "level": "error",
        "environment": "production", "release": "shop@1.2", "first_seen": T0, "last_seen": T0, "event_count": 1,
    }
    assert not alert["fanned_out"]
    assert len(alert["dedupe_key"]) == 32 and int(alert["dedupe_key"], 16) >= 0
    ingest(inbox, T0 + 1)  # the open issue again
    assert len(alerts(inbox)) == 1


def test_an_alert_is_committed_with_its_event_or_not_at_all(inbox: InboxStore) -> None:
    def fails(connection: sqlalchemy.Connection, *_: object) -> None:  # e.g. the feeder's marking fails
        raise sqlalchemy.exc.OperationalError("update inbox_read", {}, Exception("database is locked"))

    body = event_envelope(error("'user'"))
    with pytest.raises(sqlalchemy.exc.OperationalError):
        inbox.ingest_batch([Incoming(body, "", T0, LOCAL_DSN)], then=fails)
    assert alerts(inbox) == []
    with inbox.engine.connect() as connection:
        assert connection.exec_driver_sql("select count(*) from inbox_issue").scalar_one() == 0
    inbox.ingest_batch([Incoming(body, "", T0, LOCAL_DSN)])  # read again: the alert is due again, once
    assert [a["rule"] for a in alerts(inbox)] == ["new"]
    inbox.ingest_batch([Incoming(body, "", T0, LOCAL_DSN)])  # the same event id: not stored, no alert
    assert len(alerts(inbox)) == 1


def test_a_regression_alerts_once_per_quiet_period(inbox: InboxStore) -> None:
    ingest(inbox, T0)
    issue_id = issue(inbox)["id"]
    Triage(inbox.engine).change_status(issue_id, states.RESOLVED, "ada")
    ingest(inbox, T0 + MINUTE, environment="staging")
    [regression] = alerts(inbox, "regression")
    assert (regression["reason"], regression["event_count"], regression["environment"], regression["last_seen"]) == (
        "A resolved issue happened again.", 2, "staging", T0 + MINUTE)
    Triage(inbox.engine).change_status(issue_id, states.RESOLVED, "ada")
    ingest(inbox, T0 + 30 * MINUTE)  # regressed again, 29 minutes after its regression alert
    assert issue(inbox)["status"] == states.REGRESSED
    assert len(alerts(inbox, "regression")) == 1
    Triage(inbox.engine).change_status(issue_id, states.RESOLVED, "ada")
    ingest(inbox, T0 + 31.5 * MINUTE)  # the quiet period (30 minutes) is over
    assert [a["created_at"] for a in alerts(inbox, "regression")] == [T0 + MINUTE, T0 + 31.5 * MINUTE]


def test_a_shorter_quiet_period_lets_regressions_alert_sooner(inbox: InboxStore) -> None:
    set_rules(inbox, quiet_minutes=0)
    ingest(inbox, T0)
    for at in (T0 + 1, T0 + 2):
        Triage(inbox.engine).change_status(issue(inbox)["id"], states.RESOLVED, "ada")
        ingest(inbox, at)
    assert len(alerts(inbox, "regression")) == 2


def test_an_issue_resolved_in_its_release_or_ignored_does_not_alert(inbox: InboxStore) -> None:
    set_rules(inbox, spike_events=2)
    ingest(inbox, T0, release="shop@1.0")
    issue_id = issue(inbox)["id"]
    Triage(inbox.engine).change_status(issue_id, states.RESOLVED, "ada", in_next_release=True)
    for n in range(4):  # still running the release it was resolved in: expected, even many
        ingest(inbox, T0 + n + 1, release="shop@1.0")
    assert issue(inbox)["status"] == states.RESOLVED
    Triage(inbox.engine).change_status(issue_id, states.UNRESOLVED, "ada")
    Triage(inbox.engine).change_status(issue_id, states.IGNORED, "ada")
    for n in range(4):
        ingest(inbox, T0 + n + 10)
    assert [a["rule"] for a in alerts(inbox)] == ["new"]


def test_rules_switched_off_alert_nothing(inbox: InboxStore) -> None:
    set_rules(inbox, new_issue=False, regression=False, spike=False, spike_events=1)
    ingest(inbox, T0)
    ingest(inbox, T0 + 1)
    Triage(inbox.engine).change_status(issue(inbox)["id"], states.RESOLVED, "ada")
    ingest(inbox, T0 + 2)
    assert issue(inbox)["status"] == states.REGRESSED
    assert alerts(inbox) == []


def test_a_spike_alerts_once_per_window(inbox: InboxStore) -> None:
    set_rules(inbox, spike_events=5, spike_minutes=10, quiet_minutes=0)
    for n in range(5):
        ingest(inbox, T0 + n)
    assert alerts(inbox, "spike") == []  # 5 events within 10 minutes: not more than 5
    ingest(inbox, T0 + 5)
    [spike] = alerts(inbox, "spike")
    assert (spike["reason"], spike["event_count"], spike["created_at"]) == (
        "More than 5 events in 10 minutes.", 6, T0 + 5)
    for n in range(6, 20):  # still spiking, in the same window
        ingest(inbox, T0 + n)
    assert len(alerts(inbox, "spike")) == 1
    later = T0 + 20 + 10 * MINUTE  # the events above are out of the window by now
    for n in range(6):
        ingest(inbox, later + n)
    assert [a["created_at"] for a in alerts(inbox, "spike")] == [T0 + 5, later + 5]


def test_the_quiet_period_spaces_spike_alerts_when_longer_than_the_window(inbox: InboxStore) -> None:
    set_rules(inbox, spike_events=2, spike_minutes=1, quiet_minutes=30)
    for at in (T0, T0 + 1, T0 + 2, T0 + 20 * MINUTE, T0 + 20 * MINUTE + 1, T0 + 20 * MINUTE + 2):
        ingest(inbox, at)
    assert len(alerts(inbox, "spike")) == 1
    for at in (T0 + 31 * MINUTE, T0 + 31 * MINUTE + 1, T0 + 31 * MINUTE + 2):
        ingest(inbox, at)
    assert len(alerts(inbox, "spike")) == 2


def test_only_events_within_the_window_make_a_spike(inbox: InboxStore) -> None:
    set_rules(inbox, spike_events=3, spike_minutes=10)
    for n in range(8):  # 8 events, one every 4 minutes: never more than 3 within 10 minutes
        ingest(inbox, T0 + n * 4 * MINUTE)
    assert alerts(inbox, "spike") == []
    assert issue(inbox)["event_count"] == 8


def test_the_default_spike_is_more_than_100_events_in_10_minutes(inbox: InboxStore) -> None:
    batch = [Incoming(event_envelope(error("'user'")), "", T0 + n, LOCAL_DSN) for n in range(101)]
    inbox.ingest_batch(batch[:100])
    assert alerts(inbox, "spike") == []
    inbox.ingest_batch(batch[100:])
    assert [a["event_count"] for a in alerts(inbox, "spike")] == [101]


def test_each_issue_alerts_for_itself(inbox: InboxStore) -> None:
    set_rules(inbox, spike_events=2)
    for n in range(3):
        ingest(inbox, T0 + n, error("'user'"))
        ingest(inbox, T0 + n, error("'cart'", kind="TypeError"))
    assert sorted((a["title"], a["rule"]) for a in alerts(inbox)) == [
        ("KeyError: 'user'", "new"), ("KeyError: 'user'", "spike"),
        ("TypeError: 'cart'", "new"), ("TypeError: 'cart'", "spike")]


def test_alerts_outlive_their_issue(inbox: InboxStore) -> None:
    ingest(inbox, T0)
    Triage(inbox.engine).delete_issue(issue(inbox)["id"], "ada")
    assert [a["title"] for a in alerts(inbox)] == ["KeyError: 'user'"]


def test_a_test_alert_is_queued_for_its_channel_only(inbox: InboxStore) -> None:
    with inbox.engine.begin() as connection:
        key = triggers.queue_test_alert(connection, 7, T0)
    [alert] = alerts(inbox)
    assert alert["dedupe_key"] == key and len(key) == 32
    assert {k: alert[k] for k in ("rule", "channel_id", "project_id", "issue_id", "title", "reason", "created_at")} == {
        "rule": "test", "channel_id": 7, "project_id": 0, "issue_id": 0, "title": "A test alert from Lookout",
        "reason": "Sent from the alerts page to test this channel.", "created_at": T0}


def test_prune_deletes_old_sent_alerts_but_the_newest_of_each_issue_and_rule(inbox: InboxStore) -> None:
    set_rules(inbox, quiet_minutes=0)
    ingest(inbox, T0)  # new
    for at in (T0 + 1, T0 + 2, T0 + 3):  # three regressions
        Triage(inbox.engine).change_status(issue(inbox)["id"], states.RESOLVED, "ada")
        ingest(inbox, at)
    with inbox.engine.begin() as connection:
        queued = triggers.queue_test_alert(connection, 7, T0 + 4)  # not fanned out yet
        connection.exec_driver_sql("update alert set fanned_out = true where rule != 'test'")
        second = connection.execute(sqlalchemy.text("select id from alert where created_at = :at"),
                                    {"at": T0 + 2}).scalar_one()
        connection.execute(sqlalchemy.text(  # still being sent
            "insert into alert_delivery (alert_id, channel_id, attempts, next_attempt_at) values (:id, 1, 3, 0)"),
            {"id": second})
    with inbox.engine.begin() as connection:
        assert triggers.prune(connection, T0 + 6 * DAY) == 0  # all younger than a week
        assert triggers.prune(connection, T0 + 8 * DAY) == 1
    assert [(a["rule"], a["created_at"]) for a in alerts(inbox)] == [
        ("new", T0), ("regression", T0 + 2), ("regression", T0 + 3), ("test", T0 + 4)]
    with inbox.engine.begin() as connection:
        connection.exec_driver_sql("delete from alert_delivery")
        assert triggers.prune(connection, T0 + 8 * DAY) == 1
        # Two weeks on no quiet period reaches back to them: the newest of each go too, when sent.
        assert triggers.prune(connection, T0 + 15 * DAY) == 2
    assert [a["dedupe_key"] for a in alerts(inbox)] == [queued]
