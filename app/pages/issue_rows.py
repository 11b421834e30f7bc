"""The issue page's rows that do not come from one event: the tag distribution, the chart's points, the
timeline and the merged hashes, as flat typed rows of text (one `rx.foreach` item each)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from app.console.state import ago
from app.inbox.activity import COMMENT, Entry
from app.inbox.issue_stats import Bucket, TagValues

PERIODS = [("24h", "24 hours"), ("30d", "30 days")]
LABEL_FORMAT = {"24h": "%H:00", "30d": "%b %d"}  # a bucket's label (UTC)


@dataclass(frozen=True)
class DistributionRow:
    """`kind`: "key" (a tag key; `count`: events carrying it), "value" (one of its top values) or "other"
    (the rest of its values together)."""

    kind: str
    key: str
    value: str = ""
    count: str = ""
    share: str = ""  # "60 %"
    width: str = "0%"  # the bar's CSS width


def distribution_rows(tags: list[TagValues]) -> list[DistributionRow]:
    rows: list[DistributionRow] = []
    for tag in tags:
        rows.append(DistributionRow("key", tag.key, count=f"{tag.total:,}"))
        rows += [DistributionRow("value", tag.key, v.value, f"{v.count:,}", f"{v.percent} %", f"{v.percent}%")
                 for v in tag.values]
        if tag.others:
            share = tag.others * 100 // max(1, tag.total)
            rows.append(DistributionRow("other", tag.key, "Other", f"{tag.others:,}", f"{share} %", f"{share}%"))
    return rows


def chart_points(buckets: list[Bucket], period: str) -> list[dict[str, str | int]]:
    """The chart's data: a bucket's label (UTC) and its events."""
    fmt = LABEL_FORMAT[period]
    return [{"label": datetime.fromtimestamp(b.start, UTC).strftime(fmt), "events": b.count} for b in buckets]


@dataclass(frozen=True)
class TimelineRow:
    """One line of the timeline; a comment carries its id, its text ("" once deleted) and whether the
    client may edit or delete it (its author, a maintainer)."""

    when: str
    actor: str
    kind: str  # status, assigned, merged, unmerged or comment (app/inbox/activity.py)
    text: str
    comment_id: int = 0  # 0: not a comment
    body: str = ""
    own: bool = False


def timeline_rows(entries: list[Entry], author: str, now: float) -> list[TimelineRow]:
    """The newest first; `author`: the client's name as comments record it ("" when it may not write)."""
    return [TimelineRow(
        when=ago(entry.at, now), actor=entry.actor, kind=entry.kind, text=entry.text, comment_id=entry.comment_id or 0,
        body=entry.body, own=bool(author) and entry.kind == COMMENT and entry.actor == author and entry.body != "",
    ) for entry in reversed(entries)]


@dataclass(frozen=True)
class HashRow:
    """A grouping hash of the issue and how many of its stored events it grouped; `movable`: Unmerge is
    offered (the issue has other hashes, and this one has events to move)."""

    fingerprint: str
    events: int
    movable: bool
