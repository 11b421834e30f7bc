"""The issue page's counts, from the real sentry-sdk's events stored on SQLite and PostgreSQL: tag
distributions from the tag index, the first and last release, and events over time in hourly and daily
buckets that add up to the stored events."""

from __future__ import annotations

import pytest
import sentry_sdk

from app.inbox import issue_stats
from app.inbox.issue_stats import Bucket, TagValue, events_over_time, releases, tag_distribution
from app.ingest.store import InboxStore
from tests.environment import LOCAL_DSN
from tests.factories import query, sentry_sdk_envelopes

NOW = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
HOUR, DAY = 3600, 86400


def capture(browsers: list[str], release: str) -> list[bytes]:
    """One KeyError per browser, in `release`, as the real sentry-sdk sends them."""
    with sentry_sdk_envelopes(release=release, environment="production") as bodies:
        for browser in browsers:
            sentry_sdk.set_tag("browser.name", browser)
            try:
                raise KeyError("cart")
            except KeyError as exc:
                sentry_sdk.capture_exception(exc)
    return bodies


def store(inbox: InboxStore, bodies: list[bytes], at: list[float]) -> int:
    """Store each envelope as received at its time; the one issue they make."""
    for body, received_at in zip(bodies, at, strict=True):
        inbox.ingest_envelope(body, dsn=LOCAL_DSN, received_at=received_at)
    [(issue_id,)] = query(inbox, "select id from inbox_issue")
    return int(issue_id)


def test_tags_are_read_from_the_index_most_common_key_first(inbox: InboxStore) -> None:
    browsers = ["Chrome", "Chrome", "Chrome", "Firefox", "Safari", "Edge", "Opera", "Brave"]
    issue_id = store(inbox, capture(browsers, "shop@1.0"), [NOW] * 8)
    with inbox.engine.begin() as connection:  # a key only some events carry sorts after the ones all carry
        connection.exec_driver_sql(f"insert into inbox_issue_tag (issue_id, key, value, count, first_seen, last_seen)"
                                   f" values ({issue_id}, 'aaa.rare', 'x', 1, {NOW}, {NOW})")
    found = tag_distribution(inbox.engine, issue_id, top=3)
    by_key = {tag.key: tag for tag in found}
    browser = by_key["browser.name"]
    assert browser.total == 8 and browser.others == 3
    assert browser.values == [TagValue("Chrome", 3, 37), TagValue("Brave", 1, 12), TagValue("Edge", 1, 12)]
    assert by_key["release"].values == [TagValue("shop@1.0", 8, 100)] and by_key["release"].others == 0
    assert by_key["environment"].total == 8 and by_key["level"].values == [TagValue("error", 8, 100)]
    assert found[-1].key == "aaa.rare" and [t.total for t in found] == sorted((t.total for t in found), reverse=True)
    keys_of_eight = [t.key for t in found if t.total == 8]
    assert keys_of_eight == sorted(keys_of_eight)  # ties by name
    assert tag_distribution(inbox.engine, issue_id + 1) == []


def test_the_number_of_keys_and_values_is_bounded(inbox: InboxStore, monkeypatch: pytest.MonkeyPatch) -> None:
    issue_id = store(inbox, capture(["Chrome", "Firefox"], "shop@1.0"), [NOW, NOW])
    monkeypatch.setattr(issue_stats, "MAX_KEYS", 2)
    found = tag_distribution(inbox.engine, issue_id, top=10**6)
    assert len(found) == 2 and all(len(t.values) <= issue_stats.MAX_TOP for t in found)
    assert [len(t.values) for t in tag_distribution(inbox.engine, issue_id, top=-5)] == [1, 1]


def test_the_first_and_last_release_seen(inbox: InboxStore) -> None:
    old, new = capture(["Chrome"], "shop@1.0"), capture(["Chrome", "Chrome"], "shop@2.0")
    issue_id = store(inbox, [*old, *new], [NOW - DAY, NOW - HOUR, NOW])
    assert releases(inbox.engine, issue_id) == ("shop@1.0", "shop@2.0")
    inbox.ingest_envelope(capture(["Chrome"], "shop@1.0")[0], dsn=LOCAL_DSN, received_at=NOW + 1)
    assert releases(inbox.engine, issue_id) == ("shop@1.0", "shop@1.0")  # seen again last
    assert releases(inbox.engine, issue_id + 1) == ("", "")


def test_events_over_time_in_hourly_and_daily_buckets_add_up_to_the_stored_events(inbox: InboxStore) -> None:
    at = [NOW, NOW - 1, NOW - 2 * HOUR, NOW - 23 * HOUR, NOW - 3 * DAY, NOW - 29 * DAY, NOW - 40 * DAY]
    issue_id = store(inbox, capture(["Chrome"] * len(at), "shop@1.0"), at)
    hourly = events_over_time(inbox.engine, issue_id, NOW, "24h")
    assert len(hourly) == 24
    this_hour = NOW // HOUR * HOUR
    assert hourly[-1] == Bucket(this_hour, 2) and hourly[-3] == Bucket(this_hour - 2 * HOUR, 1)
    assert hourly[0] == Bucket(this_hour - 23 * HOUR, 1) and sum(b.count for b in hourly) == 4
    daily = events_over_time(inbox.engine, issue_id, NOW, "30d")
    today = NOW // DAY * DAY
    assert len(daily) == 30 and daily[-1].start == today and daily[0].start == today - 29 * DAY
    assert [b.count for b in daily if b.count] == [1, 1, 1, 3]  # 29, 3 and 1 day(s) ago, and today
    assert sum(b.count for b in daily) == len(at) - 1  # the one of 40 days ago is before the period
    [(stored,)] = query(inbox, f"select count(*) from inbox_event where received_at >= {today - 29 * DAY}")
    assert sum(b.count for b in daily) == stored
    assert sum(b.count for b in events_over_time(inbox.engine, issue_id + 1, NOW, "30d")) == 0
