"""The issue page's stack view as a client drives it: the Original / Minified switch and the library
folds are public handlers, refused to a client elsewhere like every other; this machine switches
and opens them, and arguments out of bounds change nothing. The page renders event strings as text."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy

from app.console.state import REFUSED
from app.inbox.search import IssueSearch
from app.ingest.store import InboxStore
from app.pages import issue
from app.pages.issue_state import IssueState
from app.presentation.stack import MINIFIED, ORIGINAL
from app.settings import SETTINGS
from plugin_support.envelopes import build
from tests.console.clients import LOOPBACK, STRANGER, client_state, console_database, run, shown

MARKER = f"stack-{uuid.uuid4().hex}"


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """The console's database (tests/console/clients.py), in place of the shared one (tests/databases.py)."""
    yield from console_database(tmp_path, monkeypatch)


@pytest.fixture
def issue_id(engine: sqlalchemy.Engine) -> int:
    """An issue whose event kept the frames its client sent (raw_stacktrace) and has library frames."""
    event = {"event_id": uuid.uuid4().hex, "level": "error", "platform": "python", "exception": {"values": [{
        "type": "StackProbe", "value": MARKER,
        "stacktrace": {"frames": [
            {"module": "lib.outer", "function": "call", "in_app": False},
            {"module": "lib.inner", "function": "dispatch", "in_app": False},
            {"module": "app.pages.probe", "function": "handler", "lineno": 3, "in_app": True, "context_line": "fail()"},
        ]},
        "raw_stacktrace": {"frames": [{"module": "probe.min", "function": "q", "lineno": 1, "in_app": True}]},
    }]}}
    InboxStore(engine).ingest_envelope(build(str(SETTINGS.local_dsn), [("event", json.dumps(event).encode())]))
    found = IssueSearch(engine).search("", limit=100).issues
    return next(i["id"] for i in found if MARKER in i["title"])


def texts(state: IssueState) -> list[str]:
    return [row.text for row in state.stack]


def call(state: IssueState, name: str, *args: object) -> None:
    asyncio.run(run(IssueState.event_handlers[name], state, list(args)))


@pytest.mark.parametrize(("name", "args"), [("show_frames", [MINIFIED]), ("toggle_fold", [0])])
def test_the_switch_and_the_folds_are_refused_to_a_client_elsewhere(issue_id: int, name: str, args: list[object]) -> None:
    state = client_state(IssueState, STRANGER, f"/issue?id={issue_id}")
    call(state, name, *args)
    assert state.refused == REFUSED
    assert (state.stack, state.opened_folds, state.frames_view, state.has_minified) == ([], [], ORIGINAL, False)
    assert MARKER not in shown(state)


def test_this_machine_switches_to_the_minified_frames_and_opens_a_fold(issue_id: int) -> None:
    state = client_state(IssueState, LOOPBACK, f"/issue?id={issue_id}")
    call(state, "load")
    assert state.has_minified
    assert texts(state) == [f"StackProbe: {MARKER}", "app.pages.probe in handler at line 3", "fail()", "2 library frames"]
    call(state, "toggle_fold", 0)
    assert texts(state)[3:] == ["2 library frames", "lib.inner in dispatch", "lib.outer in call"]
    call(state, "show_frames", MINIFIED)
    assert texts(state) == [f"StackProbe: {MARKER}", "probe.min in q at line 1"] and state.opened_folds == []
    call(state, "show_frames", "<b>not a view</b>")
    assert state.frames_view == ORIGINAL and texts(state)[-1] == "2 library frames"
    call(state, "toggle_fold", 0)
    call(state, "toggle_fold", 0)  # and closed again
    assert texts(state)[-1] == "2 library frames"


@pytest.mark.parametrize("fold", [True, -1, 10**9, "0", None, 0.0])
def test_a_fold_index_out_of_bounds_changes_nothing(issue_id: int, fold: object) -> None:
    state = client_state(IssueState, LOOPBACK, f"/issue?id={issue_id}")
    call(state, "load")
    before = list(state.stack)
    call(state, "toggle_fold", fold)
    assert state.opened_folds == [] and state.stack == before


def test_another_event_closes_the_folds(issue_id: int) -> None:
    state = client_state(IssueState, LOOPBACK, f"/issue?id={issue_id}")
    call(state, "load")
    call(state, "toggle_fold", 0)
    assert state.opened_folds == [0]
    call(state, "turn", 1)
    assert state.opened_folds == [] and texts(state)[-1] == "2 library frames"


def test_the_page_renders_every_string_of_the_event_as_text() -> None:
    compiled = str(issue.page())
    assert "dangerouslySetInnerHTML" not in compiled
    for element in ("stack-switch-minified", "stack-library-fold", "stack-context-line", "stack-sourcemap-error",
                    "stack-python-page", "issue-stack"):
        assert element in compiled
