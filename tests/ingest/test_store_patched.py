"""Events ingest changed (symbolicated, described by their User-Agent, given an id), kept as sent with a
patch of what changed (app/sourcemaps/event_patch.py) when they came through the outbox: they read back
exactly as ingest left them and grouped them. Real minified builds (tests/sourcemaps/reflex_like_build.py),
real envelopes, the real feeder, outbox and reader, on SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

import pytest
import sqlalchemy

from app.inbox import merge
from app.inbox.reading import InboxReader
from app.ingest.feeder import InboxFeeder
from app.ingest.store import InboxStore
from app.ingest.user_agent import fill_from_user_agent
from app.sourcemaps.event_patch import PREFIX, SENT_KEY
from app.sourcemaps.symbolicate import Symbolicator
from plugin_support.envelopes import build as envelope_of
from reflex_lookout.dsn import Dsn
from reflex_lookout.outbox import OutboxStore
from tests.environment import LOCAL_DSN
from tests.factories import event_envelope, local_row, query
from tests.sourcemaps.reflex_like_build import COMPONENTS, Build, Maps

FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0"


RUN: dict[tuple[str, str], str] = {}  # the frames of each build's entry: node runs the chunk once per entry


def frames(build: Build, entry: str = "Component") -> list[dict[str, Any]]:
    key = (str(build.chunk), entry)
    if key not in RUN:
        RUN[key] = json.dumps(build.frames(entry))
    return json.loads(RUN[key])


def browser_event(build: Build, entry: str = "Component", value: str = "Lookout try: a render error") -> dict[str, Any]:
    """`Build.event`, with the chunk run once per entry."""
    return {"event_id": uuid.uuid4().hex, "platform": "javascript", "level": "error", "exception": {"values": [
        {"type": "Error", "value": value, "stacktrace": {"frames": frames(build, entry)},
         "mechanism": {"type": "onerror", "handled": False}}]},
        "debug_meta": {"images": [{"type": "sourcemap", "code_file": build.url, "debug_id": build.debug_id}]}}


def symbolicating(engine: sqlalchemy.Engine, build: Build) -> InboxStore:
    store = InboxStore(engine, Symbolicator(Maps(build.stored())))
    store.ensure_project(Dsn.parse(LOCAL_DSN))
    return store


def fed(engine: sqlalchemy.Engine, inbox: InboxStore, *bodies: bytes) -> None:
    outbox = OutboxStore(engine)
    outbox.add_many([local_row(body) for body in bodies])
    assert InboxFeeder(outbox, inbox).feed_once() == len(bodies)


def as_ingest_makes_it(build: Build, event: dict[str, Any], event_id: str) -> dict[str, Any]:
    """The event as ingest changes it, in memory: its id (when it has none), its frames, its contexts."""
    made = copy.deepcopy(event)
    made.setdefault("event_id", event_id)
    Symbolicator(Maps(build.stored())).symbolicate(made)
    fill_from_user_agent(made)
    return made


def odd_shapes(build: Build) -> dict[str, Any]:
    """Every shape symbolication reads: exceptions as a bare list (one not an object), a thread's
    stack, frames with what a mapped frame loses or keeps (module, context lines, the client's own
    `data`), a frame past the end of its file (not mapped: why), one without a function, tags as pairs."""
    stack = frames(build)
    stack[-1] = {**stack[-1], "module": "chunk", "pre_context": ["x"], "context_line": "y", "post_context": [],
                  "vars": {"armed": True}, "data": {"sourcemap_error": "old", "python_page": {"file": "sent"}, "n": None}}
    stack[0] = {**stack[0], "lineno": 10_000}
    del stack[1]["function"]
    thread = {"id": 1, "stacktrace": {"frames": frames(build, "clicked")}}
    return {"platform": "javascript", "tags": [["route", "/try"]],
            "exception": ["not a value", {"type": "Error", "value": "odd", "stacktrace": {"frames": stack}}],
            "threads": {"values": [thread]},
            "debug_meta": {"images": [{"type": "sourcemap", "code_file": build.url, "debug_id": build.debug_id}]},
            "request": {"headers": [["user-agent", FIREFOX]]}}


def variants(build: Build) -> dict[str, dict[str, Any]]:
    mapped = browser_event(build)
    del mapped["event_id"]
    described = {"platform": "javascript", "message": "described", "request": {"headers": {"User-Agent": FIREFOX}},
                 "contexts": {"trace": {"trace_id": "a" * 32}}, "tags": {"route": "/try"}}
    return {"mapped and described": {**mapped, "request": {"headers": {"User-Agent": FIREFOX}}},
            "mapped, sent without an id": mapped, "described only": described, "odd shapes": odd_shapes(build)}


@pytest.mark.parametrize("variant", ["mapped and described", "mapped, sent without an id", "described only", "odd shapes"])
def test_an_event_ingest_changed_is_kept_as_sent_with_a_patch_and_reads_back_as_ingest_made_it(
        engine: sqlalchemy.Engine, first_build: Build, variant: str) -> None:
    event = variants(first_build)[variant]
    header_id = uuid.uuid4().hex
    if variant != "mapped, sent without an id":
        event = {"event_id": uuid.uuid4().hex, **event}
    sent = json.dumps(event).encode()
    inbox = symbolicating(engine, first_build)
    fed(engine, inbox, envelope_of(LOCAL_DSN, [("event", sent)], event_id=header_id))

    expected = as_ingest_makes_it(first_build, event, header_id)
    read = InboxReader(engine).event(expected["event_id"])
    assert read is not None
    assert json.dumps(read["event"]) == json.dumps(expected)  # the same event, its keys in the same order
    [(payload, envelope_id)] = query(inbox, "select payload, envelope_id from inbox_event")
    assert payload.startswith(PREFIX) and envelope_id is None
    assert f"{SENT_KEY}{sent.decode()}," in payload  # the event as sent, verbatim
    assert "raw_stacktrace" not in payload and len(payload) < len(json.dumps(expected))
    # grouped as the event ingest made
    title, culprit = query(inbox, "select title, culprit from inbox_issue")[0]
    assert (title, culprit) == {"odd shapes": ("Error: odd", f"{COMPONENTS} in renderBomb"),
                                "described only": ("described", "")}.get(
        variant, ("Error: Lookout try: a render error", f"{COMPONENTS} in renderBomb"))


def test_read_back_the_same_through_the_outbox_as_kept_whole_without_it(
        engine: sqlalchemy.Engine, first_build: Build) -> None:
    """`ingest_envelope` (no outbox row) keeps the changed event whole, as JSON; the feeder keeps it
    as sent with a patch: both read back as the same text."""
    inbox = symbolicating(engine, first_build)
    whole, patched = ({**odd_shapes(first_build), "event_id": event_id} for event_id in ("a" * 32, "b" * 32))
    inbox.ingest_envelope(event_envelope(whole))
    fed(engine, inbox, event_envelope(patched))
    assert [p.startswith(PREFIX) for (p,) in query(inbox, "select payload from inbox_event order by id")] == [False, True]
    reader = InboxReader(engine)
    assert json.dumps({**reader.event("a" * 32)["event"], "event_id": ""}) == json.dumps(
        {**reader.event("b" * 32)["event"], "event_id": ""})


def test_merged_and_unmerged_issues_read_their_patched_events(engine: sqlalchemy.Engine, first_build: Build) -> None:
    inbox = symbolicating(engine, first_build)
    render, anonymous = browser_event(first_build), browser_event(first_build, "clicked", "Lookout try: an anonymous error")
    fed(engine, inbox, *(event_envelope(e) for e in (render, anonymous)))
    issues = query(inbox, "select id, title, culprit from inbox_issue order by id")
    assert {row[2] for row in issues} == {f"{COMPONENTS} in renderBomb", "app/pages/try_errors.py in page"}
    with engine.begin() as connection:
        kept = merge.merge(connection, [row[0] for row in issues], "ada")
        [moved] = [fingerprint for fingerprint, _ in merge.hashes(connection, kept)
                   if fingerprint != query(inbox, f"select fingerprint from inbox_issue where id = {kept}")[0][0]]
        again = merge.unmerge(connection, kept, moved, "ada")
    assert {row[1:] for row in query(inbox, "select id, title, culprit from inbox_issue")} == {row[1:] for row in issues}
    [stored] = InboxReader(engine).issue_events(again, 10)
    assert stored["event"]["exception"]["values"][0]["stacktrace"]["frames"][-1]["filename"] == COMPONENTS


SPOILS = ("length past the end", "length short", "a frame more", "a map it has not", "a context no User-Agent gives",
          "a patch within the patch", "an event id it has", "a frame that is a number")


def spoiled(payload: str, how: str) -> str:
    """The kept text with its patch made not to fit its event (still JSON, but for the first two)."""
    length = int(payload[len(PREFIX):payload.index(",")])
    if how == "length past the end":
        return payload.replace(f"{PREFIX}{length},", f"{PREFIX}{length + 10 ** 9},", 1)
    if how == "length short":
        return payload.replace(f"{PREFIX}{length},", f"{PREFIX}{length - 1},", 1)
    sent_end = payload.index(SENT_KEY) + len(SENT_KEY) + length
    patch = json.loads("{" + payload[sent_end + 1:])
    stack = patch["exception"]["values"][0]["stacktrace"]["frames"]
    if how == "a frame more":
        stack.append(None)
    elif how == "a map it has not":
        stack[-1]["map"] = 7
    elif how == "a context no User-Agent gives":
        patch["contexts"] = {"gpu": {"name": "x"}}
    elif how == "a patch within the patch":
        patch["lookout_sent"] = {}
    elif how == "an event id it has":
        patch["event_id"] = "c" * 32
    elif how == "a frame that is a number":
        stack[-1] = 3
    return payload[:sent_end + 1] + json.dumps(patch)[1:]


def test_a_patch_that_does_not_fit_its_event_costs_that_event_only(engine: sqlalchemy.Engine, first_build: Build) -> None:
    """Each event's kept text spoilt another way (a row edited by hand): it reads as none, logged,
    and the issue's other event reads as ever."""
    inbox = symbolicating(engine, first_build)
    events = [{**browser_event(first_build), "request": {"headers": {"User-Agent": FIREFOX}}} for _ in range(len(SPOILS) + 1)]
    fed(engine, inbox, *(event_envelope(e) for e in events))
    with engine.begin() as connection:
        for event, how in zip(events, SPOILS, strict=False):
            payload = connection.execute(sqlalchemy.text("select payload from inbox_event where event_id = :e"),
                                         {"e": event["event_id"]}).scalar_one()
            connection.execute(sqlalchemy.text("update inbox_event set payload = :p where event_id = :e"),
                               {"p": spoiled(payload, how), "e": event["event_id"]})
    reader = InboxReader(engine)
    assert {how: reader.event(event["event_id"]) for event, how in zip(events, SPOILS, strict=False)} == dict.fromkeys(SPOILS)
    [issue_id] = {row[0] for row in query(inbox, "select issue_id from inbox_event")}
    assert [e["event"]["event_id"] for e in reader.issue_events(issue_id, 20)] == [events[-1]["event_id"]]


def test_an_event_sent_as_text_that_reads_as_a_patch_is_kept_as_json(engine: sqlalchemy.Engine, inbox: InboxStore) -> None:
    """Kept as its text when nothing changed it (no outbox row): one that begins as a kept patch does
    is kept as JSON instead, and reads back as sent."""
    event = {"lookout_sent_length": 2, "lookout_sent": {}, "event_id": "f" * 32, "message": "as sent"}
    text = json.dumps(event, separators=(",", ":"))
    assert text.startswith(PREFIX)
    inbox.ingest_envelope(envelope_of(LOCAL_DSN, [("event", text.encode())]))
    assert InboxReader(engine).event("f" * 32)["event"] == event
