"""app/releases/health.py: release health as Sentry counts it, from sessions the real sentry-sdk made
(application and request mode) and checked against a hand count of them; adoption, the issues a
release was first seen in, and a release's sessions over time."""

from __future__ import annotations

import time

from app.ingest.store import InboxStore
from app.releases import health
from tests.releases.sessions import ABNORMAL, CRASHED, ERRORED, HEALTHY, Session, run_sessions

# Ten single sessions of four users (and two without one), and six requests.
SESSIONS = [Session(HEALTHY, "ada"), Session(HEALTHY, "ada"), Session(ERRORED, "bob"), Session(CRASHED, "bob"),
            Session(HEALTHY, "cy"), Session(ABNORMAL, "cy"), Session(HEALTHY, "dee"), Session(CRASHED),
            Session(ERRORED), Session(HEALTHY, "dee")]
REQUESTS = [HEALTHY, HEALTHY, HEALTHY, ERRORED, CRASHED, HEALTHY]


def by_version(inbox: InboxStore, **where: object) -> dict[str, health.ReleaseHealth]:
    return {r.version: r for r in health.releases(inbox.engine, **where)}  # type: ignore[arg-type]


def test_crash_free_figures_match_a_hand_count_of_the_sessions_sent(inbox: InboxStore) -> None:
    run_sessions(inbox, SESSIONS, requests=REQUESTS)
    release = by_version(inbox)["shop@1.0"]
    # By hand: 16 started; crashed 2 + 1 (a request); errored 2 + 1; abnormal 1; the rest healthy.
    assert (release.sessions, release.crashed, release.errored, release.abnormal, release.healthy) == (16, 3, 3, 1, 9)
    assert release.crash_free_sessions == 100 * (1 - 3 / 16)
    # Users: ada, bob, cy, dee (requests and two sessions name none); one of them, bob, crashed.
    assert (release.users, release.crashed_users, release.crash_free_users) == (4, 1, 75.0)
    assert release.adoption == 100.0 and release.sessions_24h == 16  # the project's only release today
    assert (release.users_24h, release.users_adoption) == (4, 100.0)
    assert release.new_issues == 1  # "checkout failed", handled or not, is one issue
    assert release.first_seen is not None and release.last_seen is not None and release.first_seen <= release.last_seen
    run_sessions(inbox, [Session(CRASHED, "ada")], release="shop@1.1")
    assert by_version(inbox)["shop@1.1"].new_issues == 0  # that issue was first seen in 1.0


def test_adoption_is_a_releases_share_of_its_projects_sessions_in_the_last_day(inbox: InboxStore) -> None:
    run_sessions(inbox, [Session(HEALTHY, "ada"), Session(HEALTHY, "bob"), Session(HEALTHY, "bob")], release="shop@1.0")
    run_sessions(inbox, [Session(HEALTHY, "ada")], release="shop@1.1")
    found = by_version(inbox)
    assert (found["shop@1.0"].adoption, found["shop@1.1"].adoption) == (75.0, 25.0)
    assert (found["shop@1.0"].users_adoption, found["shop@1.1"].users_adoption) == (100.0, 50.0)  # of ada and bob
    assert [r.version for r in health.releases(inbox.engine)][0] == "shop@1.1"  # last seen first
    tomorrow = by_version(inbox, now=time.time() + 2 * 86400)
    assert tomorrow["shop@1.0"].adoption is None and tomorrow["shop@1.0"].sessions == 3  # nothing in that day
    assert list(by_version(inbox, version="shop@1.1")) == ["shop@1.1"]
    assert list(by_version(inbox, containing="P@1.1")) == ["shop@1.1"] and by_version(inbox, containing="%") == {}


def test_a_release_with_no_sessions_has_no_figures_rather_than_a_perfect_one(inbox: InboxStore) -> None:
    run_sessions(inbox, [Session(HEALTHY, "ada")], release="shop@1.0")
    release = by_version(inbox, project_id=999)
    assert release == {}
    only_events = health.ReleaseHealth(1, "p", "v", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, None, None, 0)
    assert (only_events.crash_free_sessions, only_events.crash_free_users, only_events.adoption,
            only_events.users_adoption) == (None, None, None, None)


def test_a_releases_sessions_over_time_by_hour_and_by_day(inbox: InboxStore) -> None:
    run_sessions(inbox, [Session(HEALTHY), Session(CRASHED), Session(ERRORED)], requests=[HEALTHY])
    project_id = health.releases(inbox.engine)[0].project_id
    hourly = health.series(inbox.engine, project_id, "shop@1.0", "24h")
    assert len(hourly) in (24, 25) and all(b["start"] - a["start"] == 3600 for a, b in zip(hourly, hourly[1:], strict=False))
    assert hourly[-1] == {"start": hourly[-1]["start"], "healthy": 2, "errored": 1, "abnormal": 0, "crashed": 1}
    assert sum(row["healthy"] for row in hourly[:-1]) == 0
    daily = health.series(inbox.engine, project_id, "shop@1.0", "14d")
    assert len(daily) in (14, 15) and daily[-1]["crashed"] == 1
    assert health.series(inbox.engine, project_id, "shop@9", "14d")[-1]["healthy"] == 0
