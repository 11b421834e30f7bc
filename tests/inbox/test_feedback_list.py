"""`InboxReader.feedback_list`, what /feedback lists: newest first, of one project or all, older than
an id; each piece with the issue of the event it is about when that event is stored (of the same
project), and the projects that have feedback."""

from __future__ import annotations

import json

from app.inbox.reading import InboxReader
from app.ingest.store import InboxStore
from app.projects.registry import Projects
from plugin_support.envelopes import build
from tests.environment import LOCAL_DSN
from tests.factories import error, event_envelope


def feedback(message: str, event_id: str = "", release: str = "") -> tuple[str, bytes]:
    payload = {"type": "feedback", "release": release, "contexts": {"feedback": {
        "message": message, "name": "Ada", "contact_email": "ada@example.com", "url": f"https://shop.example/{message}",
        "associated_event_id": event_id}}}
    return "feedback", json.dumps(payload).encode()


def test_feedback_is_listed_newest_first_with_its_issue_and_filtered_by_project(inbox: InboxStore) -> None:
    billing = Projects(inbox.engine).add("<b>Billing</b>")
    event, elsewhere = error("'cart'"), error("'invoice'")
    inbox.ingest_envelope(event_envelope(event))
    inbox.ingest_envelope(event_envelope(elsewhere, billing.dsn("localhost")))
    reader = InboxReader(inbox.engine)
    assert reader.feedback_list(None) == [] and reader.feedback_projects() == []
    inbox.ingest_envelope(build(LOCAL_DSN, [feedback("first", event["event_id"], "shop@2.1")]), received_at=100.0)
    inbox.ingest_envelope(build(LOCAL_DSN, [feedback("no-event", "f" * 32)]), received_at=200.0)
    # an event of another project with this id is not the one it is about
    inbox.ingest_envelope(build(LOCAL_DSN, [feedback("other-project", elsewhere["event_id"])]), received_at=300.0)
    inbox.ingest_envelope(build(billing.dsn("localhost"), [feedback("billing", elsewhere["event_id"])]), received_at=400.0)

    issue_id = reader.event(event["event_id"])["issue_id"]
    billing_issue = reader.event(elsewhere["event_id"])["issue_id"]
    listed = reader.feedback_list(None)
    assert [(f["message"], f["project_id"], f["issue_id"], f["issue_title"]) for f in listed] == [
        ("billing", billing.id, billing_issue, "KeyError: 'invoice'"), ("other-project", 1, None, ""),
        ("no-event", 1, None, ""), ("first", 1, issue_id, "KeyError: 'cart'")]
    first = listed[-1]
    assert {key: first[key] for key in ("received_at", "name", "email", "url", "release", "event_id")} == {
        "received_at": 100.0, "name": "Ada", "email": "ada@example.com", "url": "https://shop.example/first",
        "release": "shop@2.1", "event_id": event["event_id"]}
    assert [f["message"] for f in reader.feedback_list(1)] == ["other-project", "no-event", "first"]
    assert [f["message"] for f in reader.feedback_list(billing.id)] == ["billing"]
    assert reader.feedback_list(99) == []
    assert [f["message"] for f in reader.feedback_list(None, limit=2)] == ["billing", "other-project"]
    assert [f["message"] for f in reader.feedback_list(1, before_id=listed[1]["id"])] == ["no-event", "first"]
    assert reader.feedback_projects() == ["1 · Lookout", f"{billing.id} · <b>Billing</b>"]
    # the issue page's feedback: of its events only, with the page and release too
    assert [(f["message"], f["url"], f["release"]) for f in reader.feedback(issue_id)] == [
        ("first", "https://shop.example/first", "shop@2.1")]
    # and of its project only: "other-project" names billing's event from the local project
    assert [f["message"] for f in reader.feedback(billing_issue)] == ["billing"]
