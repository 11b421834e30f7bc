"""The alerts' delivery queue (alert_delivery rows): each new alert fanned out into one row per
channel that takes it (`fan_out`), the enabled channels with rows due (`due_channels`), a channel's
due rows with their alerts (`DUE`, as `Due`), and the rows of deleted channels dropped
(`drop_orphans`). app/alerts/sender.py sends what is due and settles the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import delete, func, insert, select, update

from app.alerts import channels
from app.alerts.alert import AlertItem, Channel
from app.alerts.tables import ALERTS, DELIVERIES
from app.projects.tables import PROJECTS

FAN_OUT_BATCH = 500  # alerts fanned out per transaction


@dataclass(frozen=True)
class Due:
    """A delivery row due now, with the alert it sends."""

    delivery_id: int
    attempts: int
    item: AlertItem


DUE = (
    select(DELIVERIES.c.id.label("delivery_id"), DELIVERIES.c.attempts, ALERTS.c.dedupe_key, ALERTS.c.rule,
           ALERTS.c.reason, ALERTS.c.project_id, PROJECTS.c.name.label("project"), ALERTS.c.issue_id,
           ALERTS.c.title, ALERTS.c.level, ALERTS.c.environment, ALERTS.c.release, ALERTS.c.culprit,
           ALERTS.c.first_seen, ALERTS.c.last_seen, ALERTS.c.event_count)
    .select_from(DELIVERIES.join(ALERTS, ALERTS.c.id == DELIVERIES.c.alert_id)
                 .outerjoin(PROJECTS, PROJECTS.c.id == ALERTS.c.project_id))
    .where(DELIVERIES.c.channel_id == sqlalchemy.bindparam("channel_id"),
           DELIVERIES.c.next_attempt_at <= sqlalchemy.bindparam("now"))
    .order_by(DELIVERIES.c.alert_id)
    .limit(sqlalchemy.bindparam("limit"))
)


def fan_out(connection: sqlalchemy.Connection, now: float) -> int:
    """One delivery row per channel for each alert not fanned out yet (a test alert: to its channel
    alone), up to FAN_OUT_BATCH alerts; how many alerts were fanned out. An alert no channel takes
    is only marked."""
    rows = connection.execute(
        select(ALERTS.c.id, ALERTS.c.project_id, ALERTS.c.channel_id)
        .where(ALERTS.c.fanned_out == sqlalchemy.false()).order_by(ALERTS.c.id).limit(FAN_OUT_BATCH)
    ).all()
    if not rows:
        return 0
    per_project: dict[int, list[int]] = {}
    deliveries = []
    for alert_id, project_id, channel_id in rows:
        if channel_id is not None:  # a test alert (sent once its channel is switched on)
            targets = [channel_id] if channels.channel(connection, channel_id) is not None else []
        else:
            if project_id not in per_project:
                per_project[project_id] = [c.id for c in channels.channels_for(connection, project_id)]
            targets = per_project[project_id]
        deliveries += [{"alert_id": alert_id, "channel_id": target, "attempts": 0, "next_attempt_at": now}
                       for target in targets]
    if deliveries:
        connection.execute(insert(DELIVERIES), deliveries)
    connection.execute(update(ALERTS).where(ALERTS.c.id.in_([row.id for row in rows])).values(fanned_out=True))
    return len(rows)


def due_channels(connection: sqlalchemy.Connection, now: float) -> list[tuple[Channel, int, float]]:
    """The enabled channels with deliveries due (a switched-off channel's wait until it is back on),
    each with how many are due and since when (the oldest's due time)."""
    waiting = (select(DELIVERIES.c.channel_id, func.count().label("due"), func.min(DELIVERIES.c.next_attempt_at).label("since"))
               .where(DELIVERIES.c.next_attempt_at <= now).group_by(DELIVERIES.c.channel_id).subquery())
    rows = connection.execute(
        select(*channels.COLUMNS, waiting.c.due, waiting.c.since)
        .join_from(channels.CHANNELS, waiting, waiting.c.channel_id == channels.CHANNELS.c.id)
        .where(channels.CHANNELS.c.enabled)).all()
    return [(channels.from_row(row), row.due, row.since) for row in rows]


def drop_orphans(connection: sqlalchemy.Connection) -> int:
    """Deliveries whose channel was deleted: there is nowhere to send them."""
    known = select(channels.CHANNELS.c.id)
    return connection.execute(delete(DELIVERIES).where(DELIVERIES.c.channel_id.not_in(known))).rowcount
