"""User feedback as the inbox stores it: what the user wrote, who, the page it was sent from and the
release, from Sentry's own JavaScript SDK (`captureFeedback`, as its feedback widget sends it: the
Python SDK has no feedback API) and from the older `user_report`; bounded; scrubbed as the project says
(a feedback item's own fields are not: the expected failure below); and before migration 0025."""

from __future__ import annotations

import json
import uuid

from app import db
from app.inbox.reading import InboxReader
from app.ingest.event_writer import NAME_LENGTH
from app.ingest.log_writer import URL_LENGTH
from app.ingest.store import InboxStore
from app.projects.options_store import ProjectOptionsStore
from plugin_support.envelopes import build
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from tests.environment import LOCAL_DSN
from tests.factories import as_of_revision, error, event_envelope, query, sdk_feedback

# Sentry's JavaScript SDK core, installed beside Sentry's MCP server (`make setup`, Makefile's NPM_TOOLS).
COLUMNS = "select event_id, name, email, message, url, release from inbox_feedback order by id"
# A project whose scrubbing removes e-mail addresses (the values of fields named `email`).
NO_EMAILS = ScrubbingSettings(sensitive_fields=("email",))


def test_the_javascript_sdks_feedback_is_stored_with_its_page_and_release(inbox: InboxStore) -> None:
    event = error("'cart'")
    inbox.ingest_envelope(event_envelope(event))
    body = sdk_feedback(message="The <b>Pay</b> button does nothing", name="Ada", email="ada@example.com",
                        url="https://shop.example/cart?step=2", associatedEventId=event["event_id"])
    assert inbox.ingest_envelope(body, dsn=LOCAL_DSN).feedback == 1
    assert query(inbox, COLUMNS) == [(event["event_id"], "Ada", "ada@example.com", "The <b>Pay</b> button does nothing",
                                      "https://shop.example/cart?step=2", "shop@2.1")]
    issue_id = InboxReader(inbox.engine).event(event["event_id"])["issue_id"]
    [shown] = InboxReader(inbox.engine).feedback(issue_id)
    assert (shown["url"], shown["release"], shown["email"]) == ("https://shop.example/cart?step=2", "shop@2.1",
                                                                "ada@example.com")


def test_without_the_widgets_url_the_items_request_url_is_kept(inbox: InboxStore) -> None:
    feedback = {"type": "feedback", "release": "shop@2.2", "request": {"url": "https://shop.example/orders/7"},
                "contexts": {"feedback": {"message": "where is my order?"}}}
    inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())]))
    assert query(inbox, COLUMNS) == [("", "", "", "where is my order?", "https://shop.example/orders/7", "shop@2.2")]


def test_a_user_report_names_no_page_or_release(inbox: InboxStore) -> None:
    event_id = str(uuid.uuid4())  # an older SDK's id, with dashes
    report = {"event_id": event_id, "name": "Bo", "email": "bo@example.org", "comments": "same here",
              "url": "https://not.read/", "release": "not-read"}  # neither is a field of a user report
    inbox.ingest_envelope(build(LOCAL_DSN, [("user_report", json.dumps(report).encode())]))
    assert query(inbox, COLUMNS) == [(event_id.replace("-", ""), "Bo", "bo@example.org", "same here", "", "")]


def test_the_page_and_release_are_cut_to_their_lengths(inbox: InboxStore) -> None:
    inbox = InboxStore(inbox.engine, scrubbing_of=lambda project_id: ScrubbingSettings(scrub_data=False))
    long = "https://shop.example/" + "p" * (1024 * 1024)
    feedback = {"release": "r" * 100_000, "contexts": {"feedback": {"message": "long", "url": long}}}
    odd = {"release": ["a list"], "request": {"url": 42}, "contexts": {"feedback": {"message": "odd", "url": None}}}
    inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode()),
                                            ("feedback", json.dumps(odd).encode())]))
    assert query(inbox, "select url, release from inbox_feedback order by id") == [
        (long[:URL_LENGTH], "r" * NAME_LENGTH), ("42", "['a list']")]


def test_a_project_that_scrubs_e_mail_addresses_keeps_no_user_reports_address(inbox: InboxStore) -> None:
    ProjectOptionsStore(inbox.engine).set_scrubbing(1, NO_EMAILS)
    report = {"event_id": "e" * 32, "name": "Bo", "email": "bo@example.org", "comments": "same here"}
    inbox.ingest_envelope(build(LOCAL_DSN, [("user_report", json.dumps(report).encode())]))
    assert query(inbox, "select name, email, message from inbox_feedback") == [("Bo", "[Filtered]", "same here")]


def test_a_project_that_scrubs_e_mail_addresses_keeps_no_feedback_contact_address(inbox: InboxStore) -> None:
    """Relay applies no rule inside `contexts.feedback`: the plugin scrubs its fields itself
    (reflex_lookout/scrubbing/relay.py `_scrub_feedback`), as an event's message and `extra`."""
    ProjectOptionsStore(inbox.engine).set_scrubbing(1, NO_EMAILS)
    feedback = {"type": "feedback", "contexts": {"feedback": {"message": "call me", "contact_email": "ada@example.com"}}}
    inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())]))
    assert query(inbox, "select email, message from inbox_feedback") == [("[Filtered]", "call me")]


def test_a_feedbacks_words_are_scrubbed_as_an_events_message_by_default(inbox: InboxStore) -> None:
    """The defaults: a card number or an e-mail address in the message goes, a secret in the page's query
    goes; the reporter's own contact address stays (what feedback is for, as in Sentry)."""
    feedback = {"type": "feedback", "contexts": {"feedback": {
        "message": "paid with 4111111111111111, write to bob@example.com", "contact_email": "ada@example.com",
        "name": "Ada", "url": "https://shop.example/cart?token=s3cr3t-value"}}}
    inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())]))
    [(name, email, message, url)] = query(inbox, "select name, email, message, url from inbox_feedback")
    assert (name, email) == ("Ada", "ada@example.com")
    assert "4111111111111111" not in message and "bob@example.com" not in message and message.startswith("paid with")
    assert "s3cr3t-value" not in url


def test_feedback_stored_before_0025_keeps_its_words_and_has_no_page_or_release(inbox: InboxStore) -> None:
    """Migration 0025 both ways: the downgrade drops the page and release and keeps the rest; the
    upgrade gives the rows stored before "" for both."""
    feedback = {"type": "feedback", "release": "shop@2.1", "contexts": {"feedback": {
        "message": "stored at 0024", "name": "Ada", "url": "https://shop.example/cart"}}}
    with as_of_revision(inbox.engine, "0024_tag_queue_per_pair"):
        inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())]))
    assert query(inbox, "select name, message from inbox_feedback") == [("Ada", "stored at 0024")]
    db.migrate(inbox.engine)
    inbox.ingest_envelope(build(LOCAL_DSN, [("feedback", json.dumps(feedback).encode())]))
    assert query(inbox, "select message, url, release from inbox_feedback order by id") == [
        ("stored at 0024", "", ""), ("stored at 0024", "https://shop.example/cart", "shop@2.1")]
