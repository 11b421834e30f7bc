"""app/releases/session_retention.py, run by the inbox's retention: the age cap, and the row cap
that folds the oldest sessions into hourly counts (session counts exact, their users no longer
counted) before it drops any."""

from __future__ import annotations

import time

from app.inbox.retention import Caps, Retention
from app.ingest.store import InboxStore
from app.releases import health
from app.releases.tables import SESSIONS
from tests.factories import query
from tests.releases.sessions import CRASHED, ERRORED, HEALTHY, Session, run_sessions


def figures(inbox: InboxStore) -> tuple[int, int, int, int, int]:
    [found] = health.releases(inbox.engine)
    return found.sessions, found.errored, found.crashed, found.users, found.crashed_users


def test_over_the_row_cap_the_oldest_sessions_are_folded_and_their_counts_kept(inbox: InboxStore) -> None:
    ends = [HEALTHY, ERRORED, CRASHED, HEALTHY, HEALTHY, CRASHED, HEALTHY, ERRORED, HEALTHY, HEALTHY]
    run_sessions(inbox, [Session(end, f"u-{i}") for i, end in enumerate(ends)])
    assert figures(inbox) == (10, 2, 2, 10, 2)
    evicted = Retention(inbox.engine, Caps(sessions=4)).run()
    assert evicted.sessions == 0  # folded, not dropped: they all started within the same hour
    keys = [key for (key,) in query(inbox, f"select key from {SESSIONS.name} order by id")]
    assert len(keys) <= 4 and any(key.startswith("h:") for key in keys), keys
    sessions, errored, crashed, users, crashed_users = figures(inbox)
    assert (sessions, errored, crashed) == (10, 2, 2)  # what crash-free sessions is made of: exact
    assert users < 10  # the folded sessions' users are no longer told apart


def test_sessions_older_than_the_age_cap_go(inbox: InboxStore) -> None:
    run_sessions(inbox, [Session(HEALTHY, "u-1"), Session(CRASHED, "u-2")])
    assert Retention(inbox.engine, Caps(max_age_days=1)).run(now=time.time() + 2 * 86400).sessions == 2
    [release] = health.releases(inbox.engine)  # still named by the crash's event, which every issue keeps
    assert (release.sessions, release.crashed, release.users, release.crash_free_sessions) == (0, 0, 0, None)
