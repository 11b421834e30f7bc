"""Assignment, comments and the timeline on a real inbox: who may do what, what is refused with
which sentence, and the timeline's order and wording."""

from __future__ import annotations

import pytest
import sentry_sdk

from app.console.accounts import Accounts
from app.inbox import states
from app.inbox.reading import InboxReader
from app.inbox.triage import Triage
from app.ingest.store import InboxStore
from tests.factories import error, event_envelope, query, sentry_sdk_envelopes, store_all


def users(inbox: InboxStore, *names: str) -> None:
    for name in names:
        Accounts(inbox.engine, from_env={}).add_user(name, "maintainer", "a long password")


def issue_of(inbox: InboxStore, value: str = "'user'") -> int:
    event = error(value)
    inbox.ingest_envelope(event_envelope(event))
    return InboxReader(inbox.engine).event(event["event_id"])["issue_id"]


def assignee(inbox: InboxStore, issue_id: int) -> str:
    return query(inbox, f"select assignee from inbox_issue where id = {issue_id}")[0][0]


def test_an_issue_is_assigned_to_a_console_user_and_unassigned(inbox: InboxStore) -> None:
    users(inbox, "bob", "ada")
    issue_id = issue_of(inbox)
    triage = Triage(inbox.engine, env_users=["eve"])
    assert triage.assignable() == ["ada", "bob", "eve"]
    triage.assign(issue_id, "ada", "bob")
    assert assignee(inbox, issue_id) == "ada"
    with pytest.raises(states.StateError, match=f"Issue {issue_id} is already assigned to ada."):
        triage.assign(issue_id, "ada", "bob")
    triage.assign(issue_id, "eve", "ada")  # a user of LOOKOUT_CONSOLE_USERS, who has no row
    triage.assign(issue_id, "", "ada")
    assert assignee(inbox, issue_id) == ""
    assert [(e.actor, e.kind, e.text) for e in triage.timeline(issue_id)] == [
        ("bob", "assigned", "assigned to ada"), ("ada", "assigned", "assigned to eve"), ("ada", "assigned", "unassigned")]


def test_an_assignment_to_an_unknown_user_is_refused_with_a_sentence(inbox: InboxStore) -> None:
    users(inbox, "ada")
    issue_id = issue_of(inbox)
    triage = Triage(inbox.engine)
    with pytest.raises(states.StateError, match="^There is no console user 'mallory' to assign issues to.$"):
        triage.assign(issue_id, "mallory", "ada")
    with pytest.raises(states.StateError, match="^There is no issue 999.$"):
        triage.assign(999, "ada", "ada")
    assert assignee(inbox, issue_id) == "" and triage.timeline(issue_id) == []


def test_comments_are_edited_and_deleted_by_their_author_only(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox)
    triage = Triage(inbox.engine)
    comment_id = triage.add_comment(issue_id, "ada", "  Happens on checkout only.\n\nSee the trace.  ")
    for attempt in (lambda: triage.edit_comment(comment_id, "bob", "mine now"),
                    lambda: triage.delete_comment(comment_id, "bob")):
        with pytest.raises(states.StateError, match="^Only its author can change a comment.$"):
            attempt()
    [entry] = triage.timeline(issue_id)
    assert (entry.actor, entry.text, entry.comment_id, entry.body) == (
        "ada", "commented", comment_id, "Happens on checkout only.\n\nSee the trace.")

    triage.edit_comment(comment_id, "ada", "Happens on checkout and on the cart.")
    assert triage.timeline(issue_id)[0].body == "Happens on checkout and on the cart."
    triage.delete_comment(comment_id, "ada")
    [entry] = triage.timeline(issue_id)
    assert (entry.comment_id, entry.body) == (comment_id, "")  # the page shows "(deleted)"
    with pytest.raises(states.StateError, match="^That comment was deleted.$"):
        triage.edit_comment(comment_id, "ada", "back")
    with pytest.raises(states.StateError, match="^There is no comment 999.$"):
        triage.delete_comment(999, "ada")
    # The history keeps what was first said, a line of it.
    [change] = InboxReader(inbox.engine).history(issue_id)
    assert change["note"] == "Happens on checkout only. See the trace."


def test_a_comment_holds_1_to_10000_characters(inbox: InboxStore) -> None:
    issue_id = issue_of(inbox)
    triage = Triage(inbox.engine)
    for body in ("", " \n\t ", "x" * 10_001):
        with pytest.raises(states.StateError, match="A comment holds 1 to 10,000 characters"):
            triage.add_comment(issue_id, "ada", body)
    comment_id = triage.add_comment(issue_id, "ada", f" {'y' * 10_000} ")
    with pytest.raises(states.StateError, match="this one has 10,001"):
        triage.edit_comment(comment_id, "ada", "z" * 10_001)
    with pytest.raises(states.StateError, match="There is no issue 999."):
        triage.add_comment(999, "ada", "hello")
    [entry] = triage.timeline(issue_id)
    assert len(entry.body) == 10_000
    assert InboxReader(inbox.engine).history(issue_id)[0]["note"] == "y" * 80


def test_the_timeline_shows_status_assignment_merge_and_comment_in_order_with_who(inbox: InboxStore) -> None:
    users(inbox, "bob")

    def capture(name: str, release: str) -> None:
        with sentry_sdk_envelopes(release=release) as bodies:
            try:
                raise KeyError(name)
            except KeyError as exc:
                sentry_sdk.capture_exception(exc)
        store_all(inbox, bodies)

    capture("cart", "shop@1.0")
    capture("cart", "shop@1.0")
    capture("price", "shop@1.0")
    cart_id, price_id = (row[0] for row in query(inbox, "select id from inbox_issue order by id"))
    triage = Triage(inbox.engine)
    Triage(inbox.engine).change_status(cart_id, states.RESOLVED, "ada", in_next_release=True)
    capture("cart", "shop@1.1")  # regresses it
    triage.assign(cart_id, "bob", "ada")
    triage.merge([cart_id, price_id], "cy")
    comment_id = triage.add_comment(cart_id, "bob", "Both are the cart's lookup.")
    event_id = query(inbox, "select last_event_id from inbox_issue")[0][0]

    entries = triage.timeline(cart_id)
    assert [(e.actor, e.kind, e.text) for e in entries] == [
        ("ada", "status", "resolved in the release after shop@1.0"),
        ("system", "status", f"regressed (event {event_id} in shop@1.1)"),
        ("ada", "assigned", "assigned to bob"),
        ("cy", "merged", f"merged #{price_id} into this issue"),
        ("bob", "comment", "commented"),
    ]
    assert entries[-1].comment_id == comment_id and entries[-1].body == "Both are the cart's lookup."
    assert [e.at for e in entries] == sorted(e.at for e in entries) and entries[0].at > 0
