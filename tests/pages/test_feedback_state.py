"""The /feedback page's handlers as any websocket client could call them, on a real SQLite file (the
console's database: the marker's feedback about its event, tests/console/clients.py; with a project
"Shop" whose feedback names no stored event): this machine sees every piece, with its issue's link
when there is one, narrowed by the URL's project; a client elsewhere sees nothing; hostile URLs and
choices change nothing; what users wrote is text on the page. The issue page shows its feedback's
page and release too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from app.console.state import REFUSED
from app.ingest.store import InboxStore
from app.pages import feedback
from app.pages.feedback import ANY_PROJECT, FeedbackState
from app.pages.issue_state import IssueState
from app.projects.registry import Projects
from app.settings import SETTINGS
from plugin_support.envelopes import build
from tests.console.clients import LOOPBACK, MARKER, STRANGER, client_state, console_database, opened, shown

HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 2**70, [1], {"id": 1}, "1' or '1'='1"]
SHOP_FEEDBACK = {"type": "feedback", "release": "shop@2.0", "contexts": {"feedback": {
    "message": "<script>alert(1)</script>", "name": "Bo", "url": "javascript:alert(1)",
    "associated_event_id": "f" * 32}}}


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    for eng in console_database(tmp_path, monkeypatch):
        shop = Projects(eng).add("Shop")
        InboxStore(eng).ingest_envelope(build(shop.dsn("localhost"), [("feedback", json.dumps(SHOP_FEEDBACK).encode())]))
        yield eng


def redirected_to(state: FeedbackState, choice: object) -> str | None:
    """Where `set_project(choice)` sends the client (None: nowhere)."""
    spec = FeedbackState.event_handlers["set_project"].fn(state, choice)
    return None if spec is None else dict((str(name), value._var_value) for name, value in spec.args)["path"]


def test_this_machine_sees_every_piece_newest_first_with_its_issue(engine: sqlalchemy.Engine) -> None:
    state = opened(FeedbackState, LOOPBACK, "/feedback")
    assert isinstance(state, FeedbackState) and state.refused == ""
    shop, marker = state.rows
    assert (shop["message"], shop["who"], shop["url"], shop["release"], shop["issue"]) == (
        "<script>alert(1)</script>", "Bo", "javascript:alert(1)", "shop@2.0", "")  # as text; no stored event
    assert (marker["message"], marker["who"], marker["url"], marker["release"]) == (MARKER, "a@b.example", "", "")
    assert marker["issue"].startswith("/issue?id=") and marker["issue_title"] == f"KeyError: {MARKER}"
    assert state.project_list == [ANY_PROJECT, "1 · Lookout", "2 · Shop"] and state.project_choice == ANY_PROJECT
    assert state.older == state.newest == ""


def test_the_url_names_the_project_and_the_select_goes_to_its_url(engine: sqlalchemy.Engine) -> None:
    state = opened(FeedbackState, LOOPBACK, "/feedback?project=2")
    assert [row["message"] for row in state.rows] == ["<script>alert(1)</script>"] and state.project_choice == "2 · Shop"
    nothing = opened(FeedbackState, LOOPBACK, "/feedback?project=7")
    assert nothing.rows == [] and nothing.searched and nothing.project_choice == "7 · (no feedback)"
    assert redirected_to(state, "1 · Lookout") == "/feedback?project=1"
    assert redirected_to(state, ANY_PROJECT) == "/feedback"
    for choice in HOSTILE:  # only what the select offers
        assert redirected_to(state, choice) == "/feedback"


def test_older_feedback_is_a_page_of_its_own(engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feedback, "SHOWN", 1)
    newest = opened(FeedbackState, LOOPBACK, "/feedback")
    assert [row["message"] for row in newest.rows] == ["<script>alert(1)</script>"]
    assert newest.older.startswith("/feedback?before=") and newest.newest == ""
    older = opened(FeedbackState, LOOPBACK, newest.older)
    assert [row["message"] for row in older.rows] == [MARKER] and older.newest == "/feedback"


def test_hostile_urls_show_every_project(engine: sqlalchemy.Engine) -> None:
    for value in ("<b>1</b>", "-1", "1.5", "9" * 40, "١"):  # (an Arabic-Indic one: a digit to str.isdigit)
        state = opened(FeedbackState, LOOPBACK, f"/feedback?project={value}&before={value}")
        assert len(state.rows) == 2 and state.project_choice == ANY_PROJECT, value


def test_a_client_elsewhere_sees_nothing(engine: sqlalchemy.Engine) -> None:
    state = opened(FeedbackState, STRANGER, "/feedback?project=1")
    assert state.refused == REFUSED and state.rows == [] and not state.searched
    assert MARKER not in shown(state) and "alert(1)" not in shown(state)
    assert redirected_to(client_state(FeedbackState, STRANGER, "/feedback"), "1 · Lookout") is None


def test_what_users_wrote_is_text_on_the_page() -> None:
    compiled = str(feedback.page())
    assert "dangerouslySetInnerHTML" not in compiled and "feedback-table" in compiled


def test_the_issue_page_shows_the_page_and_release_of_its_feedback(engine: sqlalchemy.Engine) -> None:
    with engine.connect() as connection:
        [(issue_id, event_id)] = connection.execute(sqlalchemy.text("select issue_id, event_id from inbox_event")).all()
    later = {"type": "feedback", "release": "web@1.1", "contexts": {"feedback": {
        "message": "again", "url": "https://shop.example/cart", "associated_event_id": event_id}}}
    InboxStore(engine).ingest_envelope(build(str(SETTINGS.local_dsn), [("feedback", json.dumps(later).encode())]))
    state = opened(IssueState, LOOPBACK, f"/issue?id={issue_id}")
    assert isinstance(state, IssueState)
    assert [(f["message"], f["url"], f["release"]) for f in state.feedback] == [
        ("again", "https://shop.example/cart", "web@1.1"), (MARKER, "", "")]
