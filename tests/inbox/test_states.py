"""Issue states on a real inbox: transitions, regressions by new events, and their history."""

from __future__ import annotations

import pytest

from app.inbox import states
from app.inbox.store import InboxReader, InboxStore
from tests.inbox.test_store import error, event_envelope


def issue_of(inbox: InboxStore, **event: object) -> int:
    inbox.ingest_envelope(event_envelope({**error("'user'"), **event}))
    with inbox.engine.connect() as connection:
        return connection.exec_driver_sql("select id from inbox_issue").scalar_one()


def status(inbox: InboxStore, issue_id: int) -> str:
    with inbox.engine.connect() as connection:
        return connection.exec_driver_sql("select status from inbox_issue where id = ?", (issue_id,)).scalar_one()


def test_a_resolved_issue_regresses_when_it_happens_again(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox)
    assert inbox.change_status(issue_id, states.RESOLVED, "ada") == states.UNRESOLVED
    issue_of(inbox)
    assert status(inbox, issue_id) == states.REGRESSED
    changes = [(c["actor"], c["from_status"], c["to_status"]) for c in InboxReader(inbox.engine).history(issue_id)]
    assert changes == [("ada", "unresolved", "resolved"), ("system", "resolved", "regressed")]
    assert all(c["at"] > 0 for c in InboxReader(inbox.engine).history(issue_id))


def test_resolved_in_the_next_release_regresses_only_in_another_release(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox, release="shop@1.0")
    inbox.change_status(issue_id, states.RESOLVED, "ada", in_next_release=True)
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
    inbox.change_status(issue_id, states.IGNORED, "ada")
    issue_of(inbox)
    assert status(inbox, issue_id) == states.IGNORED
    inbox.change_status(issue_id, states.UNRESOLVED, "bob")
    assert status(inbox, issue_id) == states.UNRESOLVED


@pytest.mark.parametrize(("first", "then"), [("ignored", "resolved"), ("resolved", "ignored")])
def test_changes_the_state_does_not_allow_are_refused(inbox: InboxStore, first: str, then: str) -> None:
    issue_id = issue_of(inbox)
    inbox.change_status(issue_id, first, "ada")
    with pytest.raises(states.StateError, match=f"that is {first} cannot become {then}"):
        inbox.change_status(issue_id, then, "ada")
    with pytest.raises(states.StateError, match="no issue 999"):
        inbox.change_status(999, states.RESOLVED, "ada")
