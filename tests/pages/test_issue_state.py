"""The /issue page's handlers as any websocket client could call them, on a real SQLite file holding the
real sentry-sdk's events: a client elsewhere sees nothing; a viewer reads the chart, tags, contexts,
timeline and hashes but cannot assign, comment or unmerge (a sentence, nothing changed); a maintainer
can; event navigation stays within the stored events; hostile arguments change nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import sentry_sdk
import sqlalchemy
from sqlalchemy import select

from app import db
from app.console import state as console
from app.console.accounts import Accounts
from app.console.state import REFUSED
from app.inbox.activity import MAX_COMMENT
from app.inbox.models import InboxIssueChange
from app.inbox.tables import COMMENTS, EVENTS, GROUPHASHES, ISSUES
from app.inbox.triage import Triage
from app.ingest.store import InboxStore
from app.pages import issue
from app.pages.issue_state import IssueState
from app.pages.issue_triage_state import MAINTAINERS_ONLY, NOBODY, NOT_YOURS
from app.tables import table_of
from reflex_lookout.dsn import Dsn
from tests.console.clients import LOOPBACK, STRANGER, client_state, run, shown, signed_in
from tests.environment import LOCAL_DSN
from tests.factories import sentry_sdk_envelopes, store_all

CHANGES = table_of(InboxIssueChange)
HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 0, 2**70, 3.5, [1], {"id": 1}, "<b>1</b>"]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """A viewer (vera) and two maintainers (max, ada); the page reads through `console.database()`."""
    eng = db.engine(f"sqlite:///{tmp_path / 'issue.db'}")
    db.migrate(eng)
    console.use_database(eng)  # the pages' database (app/console/state.py), until the test ends
    accounts = Accounts(eng, from_env={})
    console.use_database(eng, accounts)
    for name, role in (("vera", "viewer"), ("max", "maintainer"), ("ada", "maintainer")):
        accounts.add_user(name, role, f"{name}-password")
    yield eng
    console.use_database(None)


def capture(error: type[Exception], message: str) -> None:
    try:
        raise error(message)
    except error as exc:
        sentry_sdk.capture_exception(exc)


@pytest.fixture
def issue_id(engine: sqlalchemy.Engine) -> int:
    """Three KeyErrors from Chrome and Firefox, merged with a ValueError's issue: one issue of two hashes."""
    inbox = InboxStore(engine)
    inbox.ensure_project(Dsn.parse(LOCAL_DSN))
    with sentry_sdk_envelopes(release="shop@1.0") as bodies:
        sentry_sdk.set_user({"id": "42", "email": "ada@example.com"})
        sentry_sdk.set_context("shop", {"cart": {"items": 3}})
        for browser in ("Chrome", "Chrome", "Firefox"):
            sentry_sdk.set_tag("browser.name", browser)
            capture(KeyError, "cart")
        capture(ValueError, "price")
    store_all(inbox, bodies)
    with engine.connect() as connection:
        ids = list(connection.execute(select(ISSUES.c.id).order_by(ISSUES.c.id)).scalars())
    return Triage(engine).merge(ids, "ada")


def call(state: IssueState, name: str, *args: object) -> None:
    asyncio.run(run(IssueState.event_handlers[name], state, list(args)))


def opened(who: dict[str, object], issue_id: int) -> IssueState:
    state = client_state(IssueState, who, f"/issue?id={issue_id}")
    call(state, "load")
    return state


def everything(engine: sqlalchemy.Engine) -> tuple[list, ...]:
    """What a change could touch: issues (assignee), comments, history, hashes, where events are."""
    with engine.connect() as connection:
        return tuple(connection.execute(select(table)).all() for table in (ISSUES, COMMENTS, CHANGES, GROUPHASHES)) + (
            connection.execute(select(EVENTS.c.id, EVENTS.c.issue_id)).all(),)


def every_change(state: IssueState, comment_id: int, fingerprint: str) -> None:
    """Every triage handler, with arguments that would work for a maintainer."""
    call(state, "assign", "max")
    call(state, "add_comment", {"body": "a viewer's comment"})
    call(state, "start_edit", comment_id)
    state.editing = comment_id  # as if the editor were open
    call(state, "save_edit", {"body": "edited"})
    call(state, "delete_comment", comment_id)
    call(state, "unmerge", fingerprint)


def test_a_viewer_reads_everything_and_changes_nothing(engine: sqlalchemy.Engine, issue_id: int) -> None:
    comment_id = Triage(engine).add_comment(issue_id, "ada", "<b>looking</b>")
    state = opened(signed_in(engine, "vera", "viewer"), issue_id)
    assert state.found and not state.may_change and state.assignee == NOBODY
    assert [(row.actor, row.text, row.body, row.own) for row in state.timeline] == [
        ("ada", "commented", "<b>looking</b>", False), ("ada", f"merged #{issue_id + 1} into this issue", "", False)]
    assert len(state.hashes) == 2 and all(h.movable for h in state.hashes)
    before = everything(engine)
    every_change(state, comment_id, state.hashes[1].fingerprint)
    assert state.message == MAINTAINERS_ONLY and state.notice == ""
    assert everything(engine) == before


def test_a_client_elsewhere_sees_nothing_and_changes_nothing(engine: sqlalchemy.Engine, issue_id: int) -> None:
    comment_id = Triage(engine).add_comment(issue_id, "ada", "secret plans")
    with engine.connect() as connection:
        fingerprint = connection.execute(select(GROUPHASHES.c.fingerprint)).scalars().first()
    before = everything(engine)
    state = opened(STRANGER, issue_id)
    every_change(state, comment_id, fingerprint)
    for name, args in (("jump", ["oldest"]), ("turn", [1]), ("show_period", ["30d"])):
        call(state, name, *args)
    assert state.refused == REFUSED and state.message == "" and not state.found
    assert state.timeline == [] and state.hashes == [] and state.chart == [] and state.contexts == []
    assert "secret plans" not in shown(state) and "ada@example.com" not in shown(state)
    assert everything(engine) == before


def test_a_maintainer_assigns_comments_edits_and_deletes_their_own(engine: sqlalchemy.Engine, issue_id: int) -> None:
    theirs = Triage(engine).add_comment(issue_id, "ada", "ada's")
    state = opened(signed_in(engine, "max", "maintainer"), issue_id)
    assert state.may_change and state.assignable == [NOBODY, "ada", "max", "vera"]
    call(state, "assign", "max")
    assert (state.message, state.notice, state.assignee) == ("", "Assigned to max.", "max")
    call(state, "assign", "nobody-by-that-name")
    assert state.message == "There is no console user 'nobody-by-that-name' to assign issues to." and state.assignee == "max"
    call(state, "add_comment", {"body": "  on it  "})
    [mine] = [row for row in state.timeline if row.own]
    assert (mine.actor, mine.body, state.timeline[0] == mine) == ("max", "on it", True)
    call(state, "start_edit", theirs)
    assert state.message == NOT_YOURS and state.editing == 0
    call(state, "start_edit", mine.comment_id)
    assert state.editing == mine.comment_id
    call(state, "save_edit", {"body": "done"})
    assert state.editing == 0 and state.notice == "Comment saved."
    assert [row.body for row in state.timeline if row.comment_id == mine.comment_id] == ["done"]
    call(state, "delete_comment", theirs)
    assert state.message == "Only its author can change a comment."
    call(state, "delete_comment", mine.comment_id)
    assert state.notice == "Comment deleted." and not any(row.own for row in state.timeline)
    kinds = [row.kind for row in state.timeline]
    assert kinds.count("assigned") == 1 and kinds.count("comment") == 2 and "merged" in kinds
    viewer = opened(signed_in(engine, "vera", "viewer"), issue_id)
    assert viewer.assignee == "max" and [row.body for row in viewer.timeline if row.kind == "comment"] == ["", "ada's"]


def test_a_comment_is_bounded(engine: sqlalchemy.Engine, issue_id: int) -> None:
    state = opened(LOOPBACK, issue_id)
    before = everything(engine)
    call(state, "add_comment", {"body": "x" * (MAX_COMMENT + 1)})
    assert state.message == f"A comment holds 1 to {MAX_COMMENT:,} characters; this one has {MAX_COMMENT + 1:,}."
    for form in ({"body": "   "}, {"body": 5}, {}, "body", None, [1]):
        call(state, "add_comment", form)
        assert state.message.startswith("A comment holds 1 to 10,000 characters"), form
    assert everything(engine) == before
    call(state, "add_comment", {"body": "y" * MAX_COMMENT})
    assert state.message == "" and state.timeline[0].actor == "this machine"


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_arguments_change_nothing(engine: sqlalchemy.Engine, issue_id: int, value: object) -> None:
    state = opened(LOOPBACK, issue_id)
    before = everything(engine)
    for name in ("start_edit", "delete_comment", "unmerge", "assign"):
        call(state, name, value)
        assert state.message.endswith(".") or value == "" and name == "assign", (name, value)
    for name in ("jump", "turn", "show_period"):
        call(state, name, value)
    assert 0 <= state.position < state.stored and (state.period, state.editing) == ("24h", 0)
    assert everything(engine) == before


def test_a_maintainer_unmerges_a_hash_but_not_the_last(engine: sqlalchemy.Engine, issue_id: int) -> None:
    state = opened(LOOPBACK, issue_id)
    moved = next(h for h in state.hashes if h.events == 1)  # the ValueError's
    call(state, "unmerge", moved.fingerprint)
    assert state.message == "" and state.notice.startswith(f"Hash {moved.fingerprint[:12]} moved to issue ")
    assert [(h.events, h.movable) for h in state.hashes] == [(3, False)] and state.count == "3"
    call(state, "unmerge", state.hashes[0].fingerprint)
    assert state.message.endswith("there is nothing to unmerge it from.") and len(state.hashes) == 1


def test_event_navigation_stays_within_the_stored_events(engine: sqlalchemy.Engine, issue_id: int) -> None:
    state = opened(LOOPBACK, issue_id)
    assert (state.position, state.stored) == (0, 4)
    latest = state.event_id
    call(state, "jump", "oldest")
    assert state.position == 3 and state.event_id != latest
    call(state, "turn", 1)
    assert state.position == 3
    call(state, "turn", -1)
    assert state.position == 2
    call(state, "jump", "latest")
    call(state, "turn", -1)
    assert (state.position, state.event_id) == (0, latest)
    call(state, "jump", "oldest")
    with engine.begin() as connection:  # the oldest one is gone (retention): the latest is shown
        connection.execute(EVENTS.delete().where(EVENTS.c.id == connection.execute(select(EVENTS.c.id).order_by(
            EVENTS.c.id).limit(1)).scalar()))
    call(state, "load")
    assert (state.position, state.stored, state.event_id) == (0, 3, latest)


def test_the_chart_tags_releases_and_contexts(engine: sqlalchemy.Engine, issue_id: int) -> None:
    state = opened(signed_in(engine, "vera", "viewer"), issue_id)
    assert len(state.chart) == 24 and sum(p["events"] for p in state.chart) == state.stored == 4
    assert state.chart_total == "4" and state.chart[-1]["label"].endswith(":00")
    call(state, "show_period", "30d")
    assert state.period == "30d" and len(state.chart) == 30 and sum(p["events"] for p in state.chart) == 4
    assert (state.first_release, state.last_release) == ("shop@1.0", "shop@1.0")
    browser = [(r.kind, r.value, r.count, r.share, r.width) for r in state.distribution if r.key == "browser.name"]
    assert browser == [("key", "", "4", "", "0%"), ("value", "Chrome", "2", "50 %", "50%"),
                       ("value", "Firefox", "2", "50 %", "50%")]  # the ValueError came from Firefox too
    assert ("value", "error", "4", "100 %") in [(r.kind, r.value, r.count, r.share) for r in state.distribution]
    tables = {row.table for row in state.contexts if row.kind == "table"}
    assert {"User", "Trace Details", "shop", "SDK"} <= tables
    assert ("User", "email", "ada@example.com") in [(r.table, r.key, r.value) for r in state.contexts if r.kind == "pair"]


def test_the_page_renders_every_string_as_text_and_keeps_its_ids() -> None:
    compiled = str(issue.page())
    assert "dangerouslySetInnerHTML" not in compiled and "RechartsBarChart" in compiled
    for element in ("issue-chart", "issue-period-24h", "issue-period-30d", "issue-breakdown", "issue-contexts",
                    "issue-latest", "issue-newer", "issue-position", "issue-older", "issue-oldest", "issue-assignee",
                    "issue-timeline", "issue-comment-body", "issue-hashes", "issue-unmerge", "issue-change",
                    "issue-first-release", "issue-tags", "issue-breadcrumbs", "issue-event-id", "issue-status"):
        assert element in compiled, element
