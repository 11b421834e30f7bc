"""Bulk actions on a real inbox: thousands of issues in bounded transactions with progress, an issue
the action does not apply to skipped and counted, and the bounds."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import sqlalchemy

from app.console.accounts import Accounts
from app.inbox import states
from app.inbox.bulk import Action, Outcome
from app.inbox.tables import ISSUES
from app.inbox.triage import Triage
from app.ingest.store import InboxStore
from app.settings import LOCAL_PROJECT_ID
from tests.factories import error, event_envelope, query


def many_issues(inbox: InboxStore, count: int) -> list[int]:
    """`count` issues of the local project, made at once (their events do not matter here)."""
    rows = [{"project_id": LOCAL_PROJECT_ID, "fingerprint": f"{n:064x}", "title": f"KeyError: 'k{n}'", "culprit": "",
             "level": "error", "kind": "error", "status": states.UNRESOLVED, "resolved_in_release": "", "first_seen": 1.0,
             "last_seen": 2.0, "event_count": 1, "last_event_id": "", "assignee": ""} for n in range(count)]
    with inbox.engine.begin() as connection:
        connection.execute(sqlalchemy.insert(ISSUES), rows)
    return [issue_id for (issue_id,) in query(inbox, "select id from inbox_issue order by id")]


def issues_with_events(inbox: InboxStore, *values: str) -> list[int]:
    for value in values:
        inbox.ingest_envelope(event_envelope(error(value)))
    return [issue_id for (issue_id,) in query(inbox, "select id from inbox_issue order by id")]


@contextlib.contextmanager
def commits(engine: sqlalchemy.Engine) -> Iterator[list[None]]:
    """One item per transaction committed on `engine` inside the block."""
    seen: list[None] = []

    def committed(_connection: sqlalchemy.Connection) -> None:
        seen.append(None)

    sqlalchemy.event.listen(engine, "commit", committed)
    try:
        yield seen
    finally:
        sqlalchemy.event.remove(engine, "commit", committed)


def test_a_bulk_resolve_of_1200_issues_runs_in_chunks_with_progress(inbox: InboxStore) -> None:
    ids = many_issues(inbox, 1200)
    Triage(inbox.engine).change_status(ids[700], states.RESOLVED, "bob")
    progress: list[tuple[int, int]] = []
    with commits(inbox.engine) as committed:
        outcome = Triage(inbox.engine).bulk(Action("resolve"), ids + ids[:3], "ada", lambda *p: progress.append(p))
    assert outcome == Outcome(done=1199, skipped=1, errors=["An issue that is resolved cannot become resolved."])
    assert progress == [(500, 1200), (1000, 1200), (1200, 1200)]
    assert len(committed) == 3  # a transaction per chunk of at most 500
    assert query(inbox, "select status, count(*) from inbox_issue group by status") == [(states.RESOLVED, 1200)]
    assert query(inbox, "select actor, count(*) from inbox_issue_change group by actor order by actor") == [
        ("ada", 1199), ("bob", 1)]


def test_a_bulk_action_is_bounded(inbox: InboxStore) -> None:
    triage = Triage(inbox.engine)
    with pytest.raises(ValueError, match="at most 10,000 issues, not 10,001"):
        triage.bulk(Action("resolve"), list(range(1, 10_002)), "ada")
    with pytest.raises(ValueError, match="one of resolve, resolve_next_release, ignore"):
        Action("archive")
    with pytest.raises(ValueError, match="names its assignee"):
        Action("assign")
    with pytest.raises(ValueError, match="positive"):
        Action("ignore", more_events=0)


def test_errors_are_counted_each_and_their_sentences_kept_up_to_20(inbox: InboxStore) -> None:
    ids = many_issues(inbox, 30)
    outcome = Triage(inbox.engine).bulk(Action("unresolve"), ids, "ada")
    assert (outcome.done, outcome.skipped, len(outcome.errors)) == (0, 30, 20)
    assert outcome.errors[0] == "An issue that is unresolved cannot become unresolved."


def test_bulk_ignore_unresolve_and_resolve_in_the_next_release(inbox: InboxStore) -> None:
    first, second = issues_with_events(inbox, "'one'", "'two'")
    triage = Triage(inbox.engine)
    assert triage.bulk(Action("ignore", more_events=10), [first, second], "ada") == Outcome(2, 0)
    assert query(inbox, "select status, ignored_until_count from inbox_issue order by id") == [
        (states.IGNORED, 11), (states.IGNORED, 11)]
    assert triage.bulk(Action("unresolve"), [first, second, 999], "ada") == Outcome(2, 1, ["There is no issue 999."])
    assert triage.bulk(Action("ignore", for_s=3600), [first], "ada") == Outcome(1, 0)
    [(until,)] = query(inbox, f"select ignored_until from inbox_issue where id = {first}")
    assert until is not None and until > 3600
    assert triage.bulk(Action("resolve_next_release"), [first, second], "ada") == Outcome(
        1, 1, ["An issue that is ignored cannot become resolved."])
    assert query(inbox, "select status from inbox_issue order by id") == [(states.IGNORED,), (states.RESOLVED,)]


def test_a_bulk_assignment_to_an_unknown_user_changes_nothing(inbox: InboxStore) -> None:
    Accounts(inbox.engine, from_env={}).add_user("bob", "maintainer", "a long password")
    ids = many_issues(inbox, 3)
    triage = Triage(inbox.engine)
    assert triage.bulk(Action("assign", assignee="mallory"), ids, "ada") == Outcome(
        0, 3, ["There is no console user 'mallory' to assign issues to."])
    assert triage.bulk(Action("assign", assignee="bob"), ids[:2], "ada") == Outcome(2, 0)
    assert triage.bulk(Action("assign", assignee="bob"), ids, "ada") == Outcome(
        1, 2, [f"Issue {ids[0]} is already assigned to bob.", f"Issue {ids[1]} is already assigned to bob."])
    assert triage.bulk(Action("assign", assignee=""), ids, "ada") == Outcome(3, 0)
    assert query(inbox, "select distinct assignee from inbox_issue") == [("",)]


def test_bulk_delete_takes_the_issues_with_their_events(inbox: InboxStore) -> None:
    gone, stays = issues_with_events(inbox, "'gone'", "'stays'", "'gone'")
    progress: list[tuple[int, int]] = []
    outcome = Triage(inbox.engine).bulk(Action("delete"), [gone, 999], "ada", lambda *p: progress.append(p))
    assert outcome == Outcome(1, 1, ["There is no issue 999."]) and progress == [(2, 2)]
    assert query(inbox, "select id from inbox_issue") == [(stays,)]
    assert query(inbox, "select issue_id, count(*) from inbox_event group by issue_id") == [(stays, 1)]
    assert query(inbox, f"select count(*) from inbox_grouphash where issue_id = {gone}") == [(0,)]


def test_a_bulk_merge_merges_all_its_issues_at_once(inbox: InboxStore) -> None:
    ids = issues_with_events(inbox, "'a'", "'b'", "'b'", "'c'")
    triage = Triage(inbox.engine)
    progress: list[tuple[int, int]] = []
    assert triage.bulk(Action("merge"), ids, "ada", lambda *p: progress.append(p)) == Outcome(3, 0)
    assert progress == [(3, 3)]
    assert query(inbox, "select id, event_count from inbox_issue") == [(ids[1], 4)]
    assert triage.bulk(Action("merge"), [ids[1]], "ada") == Outcome(0, 1, ["A merge takes 2 to 100 issues, not 1."])
    many = [issue_id for issue_id in many_issues(inbox, 101) if issue_id != ids[1]]
    assert triage.bulk(Action("merge"), many, "ada") == Outcome(0, 101, ["A merge takes 2 to 100 issues, not 101."])
