"""What the issue page counts about one issue, read with grouped queries that return a bounded number
of rows however many events the issue has:

- `tag_distribution`: per tag key, how many events carry it and its most common values, from the tag
  index counted at ingest (app/inbox/tag_index.py), not by reading events back.
- `releases`: the first and last release the issue was seen in (the `release` tag's first and last seen).
- `users_affected`: how many users its events named (the `user` tag's distinct values).
- `events_over_time`: stored events per hour over the last 24 hours, or per day over the last 30,
  counted by the database from `inbox_event.received_at`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sqlalchemy
from sqlalchemy import Integer, cast, func, select

from app.inbox.tables import EVENTS, ISSUE_TAGS

MAX_KEYS = 50  # tag keys shown at most (an event may carry 100 tags of its own; the most common ones come first)
MAX_TOP = 20  # values shown per key at most
# A period: how many buckets, and each one's length in seconds (buckets start on the hour or at midnight UTC).
PERIODS: dict[str, tuple[int, int]] = {"24h": (24, 3600), "30d": (30, 86400)}


@dataclass(frozen=True)
class TagValue:
    value: str
    count: int
    percent: int  # of the key's total, rounded down (as the page shows it: "60 %")


@dataclass(frozen=True)
class TagValues:
    """One tag key of an issue: how many events carry it, its top values and what the rest add up to."""

    key: str
    total: int
    values: list[TagValue]
    others: int  # events with a value not among `values`


@dataclass(frozen=True)
class Bucket:
    start: float  # Unix time the bucket starts at
    count: int


def tag_distribution(engine: sqlalchemy.Engine, issue_id: int, top: int = 5) -> list[TagValues]:
    """The issue's tag keys, most common first (as Sentry lists them; ties by name), each with its `top`
    most common values (ties by value)."""
    top = min(max(1, top), MAX_TOP)
    tags = ISSUE_TAGS
    with engine.connect() as connection:
        totals = connection.execute(
            select(tags.c.key, func.sum(tags.c.count).label("total"))
            .where(tags.c.issue_id == issue_id).group_by(tags.c.key)
            .order_by(func.sum(tags.c.count).desc(), tags.c.key).limit(MAX_KEYS)
        ).all()
        if not totals:
            return []
        rank = func.row_number().over(partition_by=tags.c.key, order_by=(tags.c.count.desc(), tags.c.value)).label("rank")
        ranked = (select(tags.c.key, tags.c.value, tags.c.count, rank)
                  .where(tags.c.issue_id == issue_id, tags.c.key.in_([key for key, _ in totals])).subquery())
        rows = connection.execute(
            select(ranked.c.key, ranked.c.value, ranked.c.count).where(ranked.c.rank <= top)
            .order_by(ranked.c.key, ranked.c.rank)
        ).all()
    of_key = {key: int(total) for key, total in totals}
    values: dict[str, list[TagValue]] = {}
    for key, value, count in rows:  # at most MAX_KEYS * MAX_TOP rows
        values.setdefault(key, []).append(TagValue(value, int(count), int(count) * 100 // max(1, of_key[key])))
    return [TagValues(key, int(total), values.get(key, []), int(total) - sum(v.count for v in values.get(key, [])))
            for key, total in totals]


def releases(engine: sqlalchemy.Engine, issue_id: int) -> tuple[str, str]:
    """The release the issue was first seen in and the one it was last seen in ("" when its events name none)."""
    tags = ISSUE_TAGS
    of_release = (tags.c.issue_id == issue_id) & (tags.c.key == "release")
    with engine.connect() as connection:
        first = connection.execute(
            select(tags.c.value).where(of_release).order_by(tags.c.first_seen, tags.c.value).limit(1)).scalar()
        last = connection.execute(
            select(tags.c.value).where(of_release).order_by(tags.c.last_seen.desc(), tags.c.value.desc()).limit(1)).scalar()
    return first or "", last or ""


def users_affected(engine: sqlalchemy.Engine, issue_id: int) -> int:
    """Distinct users the issue's events named (id, username, e-mail or address: Sentry's `user` tag)."""
    tags = ISSUE_TAGS
    with engine.connect() as connection:
        return int(connection.execute(
            select(func.count()).select_from(tags).where((tags.c.issue_id == issue_id) & (tags.c.key == "user"))
        ).scalar_one())


def users_affected_of(engine: sqlalchemy.Engine, issue_ids: list[int]) -> dict[int, int]:
    """`users_affected` of each issue of `issue_ids` (those with none are left out), in one grouped query."""
    tags = ISSUE_TAGS
    if not issue_ids:
        return {}
    with engine.connect() as connection:
        return {issue_id: int(count) for issue_id, count in connection.execute(
            select(tags.c.issue_id, func.count()).where(tags.c.issue_id.in_(issue_ids), tags.c.key == "user")
            .group_by(tags.c.issue_id)
        ).all()}


TopValue = tuple[str, int, float, float]  # a tag value, its count, first and last seen


def tag_values(engine: sqlalchemy.Engine, issue_id: int, key: str, top: int = MAX_TOP) -> tuple[int, int, list[TopValue]]:
    """One tag key of the issue: how many events carry it, how many values it has, and its `top` most
    common values (value, count, first seen, last seen), from the tag index."""
    tags = ISSUE_TAGS
    of_key = (tags.c.issue_id == issue_id) & (tags.c.key == key)
    with engine.connect() as connection:
        total, unique = connection.execute(select(func.coalesce(func.sum(tags.c.count), 0), func.count()).where(of_key)).one()
        rows = connection.execute(
            select(tags.c.value, tags.c.count, tags.c.first_seen, tags.c.last_seen).where(of_key)
            .order_by(tags.c.count.desc(), tags.c.value).limit(min(max(1, top), MAX_TOP))
        ).tuples().all()
    return int(total), int(unique), [(value, int(count), first, last) for value, count, first, last in rows]


def span(now: float, period: str) -> tuple[float, int, int]:
    """Where `period`'s buckets start, how many there are and how long each is: the last one holds `now`."""
    buckets, size = PERIODS[period]
    end = (math.floor(now / size) + 1) * size
    return end - buckets * size, buckets, size


def events_over_time(engine: sqlalchemy.Engine, issue_id: int, now: float, period: str = "24h") -> list[Bucket]:
    """The issue's stored events per bucket of `period` ("24h": hourly, "30d": daily), oldest first; one
    grouped query (PostgreSQL's cast to an integer rounds, SQLite's truncates: floor it on PostgreSQL; the
    bucket is grouped by from a subquery, as PostgreSQL would not match an expression with parameters)."""
    start, buckets, size = span(now, period)
    offset = (EVENTS.c.received_at - start) / size
    with engine.connect() as connection:
        index = func.floor(offset) if connection.dialect.name == "postgresql" else cast(offset, Integer)
        numbered = select(index.label("bucket")).where(
            EVENTS.c.issue_id == issue_id, EVENTS.c.received_at >= start, EVENTS.c.received_at < start + buckets * size,
        ).subquery()
        rows = connection.execute(select(numbered.c.bucket, func.count()).group_by(numbered.c.bucket)).all()
    counts = [0] * buckets
    for bucket, count in rows:  # at most `buckets` rows
        counts[min(max(0, int(bucket)), buckets - 1)] += int(count)
    return [Bucket(start + i * size, counts[i]) for i in range(buckets)]
