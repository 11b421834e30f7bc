"""Which alerts are due as an event is stored: decided, and written as `alert` rows, in the ingest
transaction that stores the event (app/ingest/event_writer.py), so an alert is committed exactly
when its event is, and a rolled-back batch leaves none. The sender (app/alerts/sender.py) delivers
the rows.

    the event ...                               alerts (each rule of the project's, app/alerts/rules.py)
    starts an issue                          →  new         when new_issue is on
    reopens a resolved issue                 →  regression  when regression is on and none within quiet_minutes
    of an open issue (or the two above, when    spike       when spike is on, the issue has more than
      they did not alert)                                   spike_events stored events received within
                                                            spike_minutes, and none within
                                                            max(spike_minutes, quiet_minutes)
    of a resolved or ignored issue that stays so: none

At most one alert per event. Times are the events' `received_at` (an alert's `created_at` is its
event's), so a backlog read late alerts as it would have on time. This runs for every stored event:
most return after comparing numbers; the project's rules are looked up (`rules.cached`) only when
an alert could be due (any event but an issue's first could be a spike's: the smallest
`spike_events` is 1), and the spike count reads at most spike_events + 1 index entries, never a
hot issue's whole history.
"""

from __future__ import annotations

import uuid

import sqlalchemy
from sqlalchemy import bindparam, delete, exists, func, insert, literal_column, or_, select

from app.alerts import rules as alert_rules
from app.alerts.rules import Rules
from app.alerts.tables import ALERTS, DELIVERIES
from app.inbox import states
from app.inbox.grouping import CULPRIT_LENGTH, LEVEL_LENGTH, TITLE_LENGTH
from app.inbox.tables import EVENTS, ISSUES
from app.protocol.fields import cut

# What an event counted into an existing issue did (`outcome`); NEW: it started one.
NEW, REGRESSION, COUNTED, SILENCED = "new", "regression", "counted", "silenced"
MINUTE, DAY = 60.0, 86400.0
KEEP_S = 7 * DAY  # a sent alert's row is kept this long (the newest of its issue and rule longer: `prune`)
PRUNE_BATCH = 1000  # rows one `prune` deletes at most
TEST_TITLE = "A test alert from Lookout"
TEST_REASON = "Sent from the alerts page to test this channel."

# The statements of the ingest path, built once (as event_writer's are).
ALERTED = select(ALERTS.c.id).where(
    ALERTS.c.issue_id == bindparam("issue_id"), ALERTS.c.rule == bindparam("rule"),
    ALERTS.c.created_at > bindparam("since")).limit(1)  # ix_alert_issue_rule_created
RECENT = select(literal_column("1")).select_from(EVENTS).where(
    EVENTS.c.issue_id == bindparam("issue_id"), EVENTS.c.received_at > bindparam("since"),
    EVENTS.c.received_at <= bindparam("until")).limit(bindparam("limit")).subquery()  # ix_inbox_event_issue_received
COUNT_RECENT = select(func.count()).select_from(RECENT)
ISSUE = select(ISSUES.c.title, ISSUES.c.culprit, ISSUES.c.level, ISSUES.c.first_seen, ISSUES.c.last_seen,
               ISSUES.c.event_count).where(ISSUES.c.id == bindparam("issue_id"))
INSERT_ALERT = insert(ALERTS)


def outcome(status: str, regressed: bool) -> str:
    """What an event counted into an issue that had `status` did (`regressed`: it reopened it)."""
    if regressed:
        return REGRESSION
    return COUNTED if status in states.OPEN else SILENCED


def after_event(connection: sqlalchemy.Connection, project_id: int, issue_id: int, what: str, event_count: int,
                environment: str, release: str, received_at: float) -> None:
    """Write the alert the event just stored makes due, if any. `what`: NEW, or `outcome(...)`;
    `event_count`: the issue's, this event included; `environment` and `release`: the event's, as
    its row keeps them (cut at Relay's limits by app/ingest/event_writer.py)."""
    if what == SILENCED or (what == COUNTED and event_count <= 1):
        return
    due = _due(connection, alert_rules.cached(connection, project_id), issue_id, what, event_count, received_at)
    if due is not None:
        rule, reason = due
        _write(connection, project_id, issue_id, rule, reason, environment, release, received_at)


def _due(connection: sqlalchemy.Connection, rules: Rules, issue_id: int, what: str, event_count: int,
         received_at: float) -> tuple[str, str] | None:
    """(rule, reason) of the alert due, or None."""
    if what == NEW:
        # No quiet check: the issue's id is new (an alert of the same id could only be of a deleted
        # issue whose id SQLite gave again, and must not silence this one).
        return ("new", "A new issue.") if rules.new_issue else None
    if what == REGRESSION and rules.regression and not _alerted(connection, issue_id, "regression",
                                                                received_at - rules.quiet_minutes * MINUTE):
        return "regression", "A resolved issue happened again."
    if not rules.spike or event_count <= rules.spike_events:
        return None
    window = rules.spike_minutes * MINUTE
    if _alerted(connection, issue_id, "spike", received_at - max(window, rules.quiet_minutes * MINUTE)):
        return None
    recent = connection.execute(COUNT_RECENT, {"issue_id": issue_id, "since": received_at - window,
                                               "until": received_at, "limit": rules.spike_events + 1}).scalar_one()
    if recent <= rules.spike_events:
        return None
    minutes = "a minute" if rules.spike_minutes == 1 else f"{rules.spike_minutes} minutes"
    return "spike", f"More than {rules.spike_events:,} events in {minutes}."


def _alerted(connection: sqlalchemy.Connection, issue_id: int, rule: str, since: float) -> bool:
    """Whether the issue has an alert of `rule` created after `since`."""
    return connection.execute(ALERTED, {"issue_id": issue_id, "rule": rule, "since": since}).first() is not None


def _write(connection: sqlalchemy.Connection, project_id: int, issue_id: int, rule: str, reason: str,
           environment: str, release: str, received_at: float) -> None:
    """The alert's row, with what a message may say of the issue as it is now (this event counted)."""
    issue = connection.execute(ISSUE, {"issue_id": issue_id}).one()
    connection.execute(INSERT_ALERT, {
        "dedupe_key": uuid.uuid4().hex, "project_id": project_id, "issue_id": issue_id, "rule": rule,
        "reason": reason, "created_at": received_at, "channel_id": None, "fanned_out": False,
        "title": cut(issue.title, TITLE_LENGTH), "culprit": cut(issue.culprit, CULPRIT_LENGTH),
        "level": cut(issue.level, LEVEL_LENGTH), "environment": environment, "release": release,
        "first_seen": issue.first_seen, "last_seen": issue.last_seen, "event_count": issue.event_count,
    })


def queue_test_alert(connection: sqlalchemy.Connection, channel_id: int, received_at: float) -> str:
    """An alert of rule "test" for the channel `channel_id` only (the /alerts page's button); its dedupe key."""
    key = uuid.uuid4().hex
    connection.execute(INSERT_ALERT, {
        "dedupe_key": key, "project_id": 0, "issue_id": 0, "rule": "test", "reason": TEST_REASON,
        "created_at": received_at, "channel_id": channel_id, "fanned_out": False, "title": TEST_TITLE,
    })
    return key


def prune(connection: sqlalchemy.Connection, now: float) -> int:
    """Delete up to PRUNE_BATCH alerts sent in full (fanned out, no delivery left) created over
    KEEP_S ago; how many. The newest of an issue's alerts of one rule stays, for the quiet check,
    until no quiet period or spike window (a week at most: app/alerts/rules.py) can reach back to
    it from a week ago either. Alerts are no foreign keys: they outlive their issues' eviction."""
    newer = ALERTS.alias("newer")
    longest = alert_rules.LONGEST_LOOK_BACK_MINUTES * MINUTE
    old = select(ALERTS.c.id).where(
        ALERTS.c.fanned_out.is_(True), ALERTS.c.created_at < now - KEEP_S,
        ALERTS.c.id.not_in(select(DELIVERIES.c.alert_id)),
        or_(ALERTS.c.created_at < now - KEEP_S - longest,
            exists().where(newer.c.issue_id == ALERTS.c.issue_id, newer.c.rule == ALERTS.c.rule,
                           newer.c.created_at > ALERTS.c.created_at)),
    ).order_by(ALERTS.c.id).limit(PRUNE_BATCH)
    ids = connection.execute(old).scalars().all()
    if ids:
        connection.execute(delete(ALERTS).where(ALERTS.c.id.in_(ids)))
    return len(ids)


def monitor_alert(connection: sqlalchemy.Connection, project_id: int, monitor_id: int, rule: str, reason: str,
                  title: str, schedule: str, environment: str, release: str, at: float,
                  first_seen: float, last_seen: float) -> None:
    """The alert of a cron monitor's state change (app/monitors/: `rule` one of MONITOR_RULES), written
    in the transaction that changes the state: by the ingest of its check-in (failed, recovered) or
    by the watcher's pass (missed, timeout). Its issue_id is the monitor's id, its culprit the
    schedule; every channel of the project gets it. Of the project's rules, the quiet period applies,
    per monitor and rule as per issue and rule: a monitor flapping between missed and ok alerts once
    per `quiet_minutes` each way, not on every change; the issue rules' switches do not apply."""
    quiet_s = alert_rules.cached(connection, project_id).quiet_minutes * 60
    if quiet_s and connection.execute(select(ALERTS.c.id).where(
            ALERTS.c.project_id == project_id, ALERTS.c.issue_id == monitor_id, ALERTS.c.rule == rule,
            ALERTS.c.created_at > at - quiet_s).limit(1)).first() is not None:
        return
    connection.execute(INSERT_ALERT, {
        "dedupe_key": uuid.uuid4().hex, "project_id": project_id, "issue_id": monitor_id, "rule": rule,
        "reason": reason, "created_at": at, "channel_id": None, "fanned_out": False,
        "title": cut(title, TITLE_LENGTH), "culprit": cut(schedule, CULPRIT_LENGTH),
        "level": "info" if rule == "recovered" else "error", "environment": environment, "release": release,
        "first_seen": first_seen, "last_seen": last_seen, "event_count": 0,
    })
