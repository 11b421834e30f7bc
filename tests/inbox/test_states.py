"""Issue states on a real inbox: transitions, regressions by new events, and their history."""

from __future__ import annotations

import json

import pytest
import sqlalchemy

from app.inbox import states
from app.inbox.reading import InboxReader
from app.inbox.triage import Triage
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope, query


def issue_of(inbox: InboxStore, **event: object) -> int:
    inbox.ingest_envelope(event_envelope({**error("'user'"), **event}))
    with inbox.engine.connect() as connection:
        return connection.exec_driver_sql("select id from inbox_issue").scalar_one()


def status(inbox: InboxStore, issue_id: int) -> str:
    with inbox.engine.connect() as connection:
        return connection.execute(sqlalchemy.text("select status from inbox_issue where id = :id"), {"id": issue_id}).scalar_one()


def test_a_resolved_issue_regresses_when_it_happens_again(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox)
    assert Triage(inbox.engine).change_status(issue_id, states.RESOLVED, "ada") == states.UNRESOLVED
    issue_of(inbox)
    assert status(inbox, issue_id) == states.REGRESSED
    changes = [(c["actor"], c["from_status"], c["to_status"]) for c in InboxReader(inbox.engine).history(issue_id)]
    assert changes == [("ada", "unresolved", "resolved"), ("system", "resolved", "regressed")]
    assert all(c["at"] > 0 for c in InboxReader(inbox.engine).history(issue_id))


def test_resolved_in_the_next_release_regresses_only_in_another_release(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox, release="shop@1.0")
    Triage(inbox.engine).change_status(issue_id, states.RESOLVED, "ada", in_next_release=True)
    issue_of(inbox, release="shop@1.0")  # still running the old release: expected
    issue_of(inbox)  # no release: nothing to compare
    assert status(inbox, issue_id) == states.RESOLVED
    issue_of(inbox, release="shop@1.1")
    assert status(inbox, issue_id) == states.REGRESSED
    assert InboxReader(inbox.engine).history(issue_id)[-1]["note"] == f"event {_last_event_id(inbox)} in shop@1.1"


def _last_event_id(inbox: InboxStore) -> str:
    with inbox.engine.connect() as connection:
        return connection.exec_driver_sql("select event_id from inbox_event order by id desc").scalar()


def test_ignored_issues_stay_ignored_until_unignored(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox)
    Triage(inbox.engine).change_status(issue_id, states.IGNORED, "ada")
    issue_of(inbox)
    assert status(inbox, issue_id) == states.IGNORED
    Triage(inbox.engine).change_status(issue_id, states.UNRESOLVED, "bob")
    assert status(inbox, issue_id) == states.UNRESOLVED


def test_an_ignore_until_more_events_runs_out_with_the_event_that_reaches_the_count(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox)  # 1 event
    with inbox.engine.begin() as connection:
        states.ignore(connection, issue_id, "ada", more_events=2)
    issue_of(inbox)
    assert status(inbox, issue_id) == states.IGNORED  # 1 more of 2
    issue_of(inbox)
    assert status(inbox, issue_id) == states.UNRESOLVED
    assert InboxReader(inbox.engine).history(issue_id)[-1]["note"] == "the ignore ran out"
    assert query(inbox, "select ignored_until, ignored_until_count from inbox_issue") == [(None, None)]


def test_an_ignore_for_a_time_runs_out_with_the_first_event_after_it(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox)
    with inbox.engine.begin() as connection:
        states.ignore(connection, issue_id, "ada", for_s=3600, now=10_000.0)
    inbox.ingest_envelope(event_envelope(error("'user'")), received_at=10_000.0 + 3599)
    assert status(inbox, issue_id) == states.IGNORED
    inbox.ingest_envelope(event_envelope(error("'user'")), received_at=10_000.0 + 3600)
    assert status(inbox, issue_id) == states.UNRESOLVED


@pytest.mark.parametrize(("first", "then"), [("ignored", "resolved"), ("resolved", "ignored")])
def test_changes_the_state_does_not_allow_are_refused(inbox: InboxStore, first: str, then: str) -> None:
    issue_id = issue_of(inbox)
    Triage(inbox.engine).change_status(issue_id, first, "ada")
    with pytest.raises(states.StateError, match=f"that is {first} cannot become {then}"):
        Triage(inbox.engine).change_status(issue_id, then, "ada")
    with pytest.raises(states.StateError, match="no issue 999"):
        Triage(inbox.engine).change_status(999, states.RESOLVED, "ada")


def test_deleting_an_issue_takes_its_events_feedback_and_history(inbox: InboxStore) -> None:
    first = error("'gone'")
    inbox.ingest_envelope(event_envelope(first))
    issue_id = InboxReader(inbox.engine).event(first["event_id"])["issue_id"]
    other = error("'stays'")
    inbox.ingest_envelope(event_envelope(other))
    feedback = {"contexts": {"feedback": {"associated_event_id": first["event_id"], "message": "broken"}}}
    inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())]))
    Triage(inbox.engine).change_status(issue_id, states.RESOLVED, "ann")
    assert Triage(inbox.engine).delete_issue(issue_id, "ann") == 1
    reader = InboxReader(inbox.engine)
    assert reader.issue(issue_id) is None and reader.event(first["event_id"]) is None
    assert reader.event(other["event_id"]) is not None
    assert query(inbox, "select count(*) from inbox_feedback") == [(0,)]
    assert query(inbox, f"select count(*) from inbox_issue_change where issue_id = {issue_id}") == [(0,)]
    with pytest.raises(states.StateError, match="There is no issue"):
        Triage(inbox.engine).delete_issue(issue_id, "ann")
    again = error("'gone'")
    inbox.ingest_envelope(event_envelope(again))
    assert reader.event(again["event_id"])["issue_id"] != issue_id  # a new issue
