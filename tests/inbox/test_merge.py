"""Merge and unmerge on a real inbox, with the real sentry-sdk's events: where new events of each
hash land afterwards, what moves, and how counts and tags combine and split."""

from __future__ import annotations

import json

import pytest
import sentry_sdk

from app.inbox import states
from app.inbox.reading import InboxReader
from app.inbox.triage import Triage
from app.ingest.store import InboxStore
from plugin_support.envelopes import build
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope, query, sentry_sdk_envelopes, store_all


def cart() -> None:
    try:
        raise KeyError("cart")
    except KeyError as exc:
        sentry_sdk.capture_exception(exc)


def price() -> None:
    try:
        raise ValueError("price")
    except ValueError as exc:
        sentry_sdk.capture_exception(exc)


def send(inbox: InboxStore, *errors: object, tier: str = "") -> None:
    """The real sentry-sdk's events of `errors` (cart, price), stored in the inbox."""
    with sentry_sdk_envelopes(release="shop@1.0") as bodies:
        if tier:
            sentry_sdk.set_tag("customer.tier", tier)
        for capture in errors:
            capture()  # type: ignore[operator]
    store_all(inbox, bodies)


def issues(inbox: InboxStore) -> dict[str, tuple]:
    """title → (id, event_count, first_seen, last_seen, fingerprint)"""
    return {title: rest for title, *rest in map(list, query(
        inbox, "select title, id, event_count, first_seen, last_seen, fingerprint from inbox_issue order by id"))}


def tag(inbox: InboxStore, issue_id: int, key: str, value: str) -> int:
    found = query(inbox, f"select count from inbox_issue_tag where issue_id = {issue_id} and key = '{key}' and value = '{value}'")
    return found[0][0] if found else 0


def events_of(inbox: InboxStore, issue_id: int) -> int:
    return query(inbox, f"select count(*) from inbox_event where issue_id = {issue_id}")[0][0]


def test_new_events_of_either_fingerprint_land_in_the_merged_issue(inbox: InboxStore) -> None:
    send(inbox, cart, cart, price, tier="gold")
    before = issues(inbox)
    (cart_id, _, cart_first, cart_last, cart_hash), (price_id, _, price_first, price_last, price_hash) = (
        before["KeyError: 'cart'"], before["ValueError: price"])
    triage = Triage(inbox.engine)
    assert triage.merge([price_id, cart_id], "ada") == cart_id  # the one with the most events stays

    [(merged_id, count, first, last, fingerprint)] = issues(inbox).values()
    assert (merged_id, count, fingerprint) == (cart_id, 3, cart_hash)
    assert first == min(cart_first, price_first) and last == max(cart_last, price_last)
    assert tag(inbox, cart_id, "customer.tier", "gold") == 3 and tag(inbox, cart_id, "level", "error") == 3
    assert query(inbox, f"select count(*) from inbox_issue_tag where issue_id = {price_id}") == [(0,)]
    assert triage.hashes(cart_id) == [(cart_hash, 2), (price_hash, 1)]

    send(inbox, price, cart, tier="silver")
    [(merged_id, count, _, newest, _)] = issues(inbox).values()
    assert (merged_id, count, events_of(inbox, cart_id)) == (cart_id, 5, 5)
    assert newest > last
    assert tag(inbox, cart_id, "customer.tier", "silver") == 2 and tag(inbox, cart_id, "level", "error") == 5
    assert triage.hashes(cart_id) == [(cart_hash, 3), (price_hash, 2)]
    assert [e.text for e in triage.timeline(cart_id)] == [f"merged #{price_id} into this issue"]


def test_comments_history_and_feedback_move_and_an_ignore_keeps_counting(inbox: InboxStore) -> None:
    stays, goes = error("'stays'"), error("'goes'", kind="TypeError")
    for event in (stays, {**stays, "event_id": None}, goes):
        inbox.ingest_envelope(event_envelope(event))
    feedback = {"contexts": {"feedback": {"associated_event_id": goes["event_id"], "message": "broken"}}}
    inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())]))
    stays_id, goes_id = (row[0] for row in issues(inbox).values())
    triage = Triage(inbox.engine)
    triage.add_comment(goes_id, "bob", "Same bug as the other one")
    Triage(inbox.engine).change_status(goes_id, states.RESOLVED, "bob")
    with inbox.engine.begin() as connection:
        states.ignore(connection, stays_id, "ada", more_events=2)  # until its count is 4

    assert triage.merge([stays_id, goes_id], "ada") == stays_id
    assert [(e.actor, e.text, e.body) for e in triage.timeline(stays_id)] == [
        ("bob", "commented", "Same bug as the other one"), ("bob", "resolved", ""), ("ada", "ignored", ""),
        ("ada", f"merged #{goes_id} into this issue", "")]
    assert [f["message"] for f in InboxReader(inbox.engine).feedback(stays_id)] == ["broken"]
    assert InboxReader(inbox.engine).event(goes["event_id"])["issue_id"] == stays_id
    # Two more events than when it was ignored: the third stored event is not enough, the fourth is.
    inbox.ingest_envelope(event_envelope(error("'goes'", kind="TypeError")))
    assert query(inbox, "select status, event_count from inbox_issue") == [(states.IGNORED, 4)]
    inbox.ingest_envelope(event_envelope(error("'stays'")))
    assert query(inbox, "select status, event_count from inbox_issue") == [(states.UNRESOLVED, 5)]


def test_a_merge_takes_2_to_100_existing_issues_of_one_project(inbox: InboxStore) -> None:
    inbox.ensure_project(Dsn.parse("http://other@localhost/2"))
    inbox.ingest_envelope(event_envelope(error("'one'")))
    inbox.ingest_envelope(event_envelope(error("'two'"), dsn="http://other@localhost/2"))
    one, two = (row[0] for row in issues(inbox).values())
    triage = Triage(inbox.engine)
    with pytest.raises(states.StateError, match="A merge takes 2 to 100 issues, not 1."):
        triage.merge([one, one], "ada")
    with pytest.raises(states.StateError, match="not 101"):
        triage.merge(list(range(1, 102)), "ada")
    with pytest.raises(states.StateError, match="There is no issue 999."):
        triage.merge([one, 999], "ada")
    with pytest.raises(states.StateError, match="Only issues of one project can be merged; these are of projects 1, 2."):
        triage.merge([one, two], "ada")
    assert len(issues(inbox)) == 2


def test_an_unmerged_hash_takes_its_events_and_new_ones_to_an_issue_of_its_own(inbox: InboxStore) -> None:
    send(inbox, cart, cart, price, tier="gold")
    send(inbox, price, tier="silver")
    (cart_id, _, _, _, cart_hash), (price_id, _, _, _, price_hash) = issues(inbox).values()
    price_events = [e for (e,) in query(inbox, f"select event_id from inbox_event where issue_id = {price_id} order by id")]
    triage = Triage(inbox.engine)
    merged = triage.merge([cart_id, price_id], "ada")

    new_id = triage.unmerge(merged, price_hash, "bob")
    assert new_id != cart_id  # SQLite may give it the merged issue's id again: the highest, deleted
    after = issues(inbox)
    assert after["KeyError: 'cart'"][:2] == [cart_id, 2] and after["ValueError: price"][:2] == [new_id, 2]
    [(culprit, status, last_event_id)] = query(
        inbox, f"select culprit, status, last_event_id from inbox_issue where id = {new_id}")
    assert culprit.endswith(" in price") and status == states.UNRESOLVED and last_event_id == price_events[-1]
    assert [e for (e,) in query(inbox, f"select event_id from inbox_event where issue_id = {new_id} order by id")] == price_events
    assert (tag(inbox, cart_id, "customer.tier", "gold"), tag(inbox, cart_id, "customer.tier", "silver")) == (2, 0)
    assert (tag(inbox, new_id, "customer.tier", "gold"), tag(inbox, new_id, "customer.tier", "silver")) == (1, 1)
    assert triage.hashes(cart_id) == [(cart_hash, 2)] and triage.hashes(new_id) == [(price_hash, 2)]
    assert [(e.actor, e.text) for e in triage.timeline(new_id)] == [("bob", f"unmerged hash {price_hash[:12]} from #{cart_id}")]
    assert triage.timeline(cart_id)[-1].text == f"unmerged hash {price_hash[:12]} to #{new_id}"

    send(inbox, price, cart)
    assert (events_of(inbox, new_id), events_of(inbox, cart_id)) == (3, 3)
    assert [row[1] for row in issues(inbox).values()] == [3, 3]


def test_the_hash_an_issue_was_named_after_can_be_unmerged_from_it(inbox: InboxStore) -> None:
    send(inbox, cart, cart, price)
    (cart_id, _, _, _, cart_hash), (price_id, _, _, _, price_hash) = issues(inbox).values()
    triage = Triage(inbox.engine)
    triage.merge([cart_id, price_id], "ada")
    new_id = triage.unmerge(cart_id, cart_hash, "ada")  # the issue keeps the price events, named after them
    assert query(inbox, f"select fingerprint, title, event_count from inbox_issue where id = {cart_id}") == [
        (price_hash, "ValueError: price", 1)]
    assert query(inbox, f"select fingerprint, title, event_count from inbox_issue where id = {new_id}") == [
        (cart_hash, "KeyError: 'cart'", 2)]
    send(inbox, cart, price)
    assert (events_of(inbox, new_id), events_of(inbox, cart_id)) == (3, 2)
    with pytest.raises(states.StateError, match="is the only one of issue"):
        triage.unmerge(cart_id, price_hash, "ada")
    with pytest.raises(states.StateError, match=f"Issue {cart_id} has no hash {cart_hash[:12]}."):
        triage.unmerge(cart_id, cart_hash, "ada")
    with pytest.raises(states.StateError, match="There is no issue 999."):
        triage.unmerge(999, cart_hash, "ada")
