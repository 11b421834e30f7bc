"""An event's browser, os and device from its User-Agent (app/ingest/user_agent.py), on real events: the
event samples' browser JavaScript event and the real sentry-sdk's, stored through the inbox, then read
back as the issue page shows them (contexts tables, tags), searched by tag and counted by the tag index."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import sentry_sdk
import sqlalchemy

from app.inbox.issue_stats import tag_distribution
from app.inbox.reading import InboxReader
from app.inbox.search import IssueSearch
from app.ingest import user_agent
from app.ingest.feeder import InboxFeeder
from app.ingest.incoming import Incoming
from app.ingest.store import InboxStore
from app.presentation.contexts import context_rows
from app.presentation.tags import tag_rows
from plugin_support.envelopes import SAMPLES
from reflex_lookout.outbox import OutboxStore
from reflex_lookout.scrubbing.relay import scrub
from reflex_lookout.scrubbing.settings import ScrubbingSettings
from tests.factories import event_envelope, local_row, query, sentry_sdk_envelopes, store_all

# sentry.javascript.browser's event, its request's only header a Firefox on Linux.
BROWSER_SAMPLE = SAMPLES / "bugsink" / "uglifyjs-minified-sourcemaps-in-bundle.json"
CHROME_ON_WINDOWS = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                     "Chrome/126.0.0.0 Safari/537.36")
SAFARI_ON_IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                    "Version/17.5 Mobile/15E148 Safari/604.1")


def browser_event(headers: Any = None) -> dict[str, Any]:
    """The browser sample with an event id of its own, and other request headers if given."""
    event = json.loads(BROWSER_SAMPLE.read_text())
    event["event_id"] = uuid.uuid4().hex
    if headers is not None:
        event["request"]["headers"] = headers
    return event


def with_request(headers: Any) -> Any:
    """An event processor adding a request, as a web framework's integration of sentry-sdk does."""
    def add(event: dict[str, Any], _hint: dict[str, Any]) -> dict[str, Any]:
        event["request"] = {"url": "https://shop.example/cart?id=7", "method": "GET", "headers": headers}
        return event
    return add


def capture(headers: Any, **scope: Any) -> list[bytes]:
    """A KeyError as the real sentry-sdk sends it from a request with `headers`; `scope`: contexts and
    tags the app set (`context_browser={...}`, `tag_os="..."`)."""
    with sentry_sdk_envelopes(release="shop@1.0") as bodies, sentry_sdk.new_scope() as current:
        current.add_event_processor(with_request(headers))
        for key, value in scope.items():
            kind, name = key.split("_", 1)
            if kind == "context":
                current.set_context(name, value)
            else:
                current.set_tag(name.replace("_", "."), value)
        try:
            raise KeyError("cart")
        except KeyError as exc:
            sentry_sdk.capture_exception(exc)
    return bodies


def latest(inbox: InboxStore) -> dict[str, Any]:
    [(issue_id,)] = query(inbox, "select id from inbox_issue")
    found = InboxReader(inbox.engine).latest_event(issue_id)
    assert found is not None
    return found


def tables(event: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The issue page's contexts tables: label → {key: value}."""
    found: dict[str, dict[str, str]] = {}
    for row in context_rows(event):
        if row.kind == "table":
            found[row.table] = {}
        elif row.kind == "pair":
            found[row.table][row.key] = row.value
    return found


def indexed(inbox: InboxStore) -> set[tuple[str, str]]:
    return {(key, value) for key, value in query(inbox, "select key, value from inbox_issue_tag")}


def test_the_browser_samples_user_agent_gives_its_browser_and_os(inbox: InboxStore) -> None:
    inbox.ingest_envelope(event_envelope(browser_event()))
    event = latest(inbox)
    assert event["contexts"]["browser"] == {"name": "Firefox", "version": "135.0", "type": "browser"}
    assert event["contexts"]["os"] == {"name": "Linux", "type": "os"}
    assert "device" not in event["contexts"] and "trace" in event["contexts"]  # a desktop: no device; the SDK's kept
    shown = tables(event)
    assert shown["Browser"] == {"name": "Firefox", "version": "135.0"} and shown["Operating System"] == {"name": "Linux"}
    assert {("browser", "Firefox 135.0"), ("browser.name", "Firefox"), ("os", "Linux"), ("os.name", "Linux")} <= set(
        tag_rows(event))
    assert {("browser", "Firefox 135.0"), ("browser.name", "Firefox"), ("os.name", "Linux")} <= indexed(inbox)


def test_chrome_on_windows_from_the_real_sdk_is_searched_and_counted(inbox: InboxStore) -> None:
    store_all(inbox, capture({"User-Agent": CHROME_ON_WINDOWS, "Accept": "*/*"}))
    event = latest(inbox)
    assert event["contexts"]["browser"] == {"name": "Chrome", "version": "126.0.0", "type": "browser"}
    assert event["contexts"]["os"] == {"name": "Windows", "version": "10", "type": "os"}
    assert "device" not in event["contexts"]
    assert {"browser": "Chrome 126.0.0", "browser.name": "Chrome", "os": "Windows 10", "os.name": "Windows"}.items() <= (
        event["tags"].items())
    assert tables(event)["Operating System"] == {"name": "Windows", "version": "10"}
    [(issue_id,)] = query(inbox, "select id from inbox_issue")
    search = IssueSearch(inbox.engine)
    assert [i["id"] for i in search.search("browser.name:Chrome os:\"Windows 10\"").issues] == [issue_id]
    assert search.search("browser.name:Firefox").issues == []
    distribution = {tag.key: tag.values for tag in tag_distribution(inbox.engine, issue_id)}
    assert [(v.value, v.count) for v in distribution["browser.name"]] == [("Chrome", 1)]
    assert [(v.value, v.count) for v in distribution["os"]] == [("Windows 10", 1)]


def test_safari_on_an_iphone_gives_its_device_from_header_pairs(inbox: InboxStore) -> None:
    inbox.ingest_envelope(event_envelope(browser_event([["accept", "*/*"], ["user-agent", SAFARI_ON_IPHONE]])))
    event = latest(inbox)
    contexts = event["contexts"]
    assert contexts["browser"] == {"name": "Mobile Safari", "version": "17.5", "type": "browser"}
    assert contexts["os"] == {"name": "iOS", "version": "17.5", "type": "os"}
    assert contexts["device"] == {"family": "iPhone", "model": "iPhone", "brand": "Apple", "type": "device"}
    assert tables(event)["Device"] == {"family": "iPhone", "model": "iPhone", "brand": "Apple"}
    assert {"device": "iPhone", "device.family": "iPhone", "os.name": "iOS"}.items() <= event["tags"].items()
    assert {("device", "iPhone"), ("device.family", "iPhone"), ("browser.name", "Mobile Safari")} <= indexed(inbox)


def test_what_the_sdk_sent_wins(inbox: InboxStore) -> None:
    store_all(inbox, capture({"user-agent": CHROME_ON_WINDOWS},
                             context_browser={"name": "Firefox", "version": "126.0"}, tag_os="Windows 11"))
    event = latest(inbox)
    assert event["contexts"]["browser"] == {"name": "Firefox", "version": "126.0"}  # the app's own, untouched
    assert event["contexts"]["os"] == {"name": "Windows", "version": "10", "type": "os"}  # it sent none
    assert event["tags"]["os"] == "Windows 11" and event["tags"]["os.name"] == "Windows"
    assert "browser.name" not in event["tags"]  # no Chrome tag beside the app's Firefox
    tags = indexed(inbox)
    assert ("browser.name", "Firefox") in tags and ("browser.name", "Chrome") not in tags
    assert ("os", "Windows 11") in tags


def test_own_tags_as_pairs_keep_theirs_and_get_the_rest() -> None:
    event = browser_event({"User-Agent": SAFARI_ON_IPHONE})
    event["tags"] = [["device", "iPhone 15 Pro"], ["route", "/cart"]]
    event["contexts"]["os"] = {"name": "iOS", "version": "17.5.1"}
    assert user_agent.fill_from_user_agent(event)
    assert event["tags"][:2] == [["device", "iPhone 15 Pro"], ["route", "/cart"]]
    assert dict(event["tags"][2:]) == {"browser": "Mobile Safari 17.5", "browser.name": "Mobile Safari",
                                       "device.family": "iPhone"}  # no os tags: the os context is the SDK's
    assert event["contexts"]["os"] == {"name": "iOS", "version": "17.5.1"}


@pytest.mark.parametrize("sample", ["bugsink/weird_ua.json", "bugsink/headers_as_lists.json", "bugsink/visualshots-rich.json"])
def test_samples_whose_header_says_nothing_are_kept_as_sent(inbox: InboxStore, sample: str) -> None:
    """weird_ua.json's User-Agent is a number and headers_as_lists.json's a list: neither is read;
    visualshots-rich.json's is one no rule knows (and the SDK sent a browser and an os). Kept as
    sent and scrubbed (two of visualshots-rich.json's breadcrumbs name an authorization)."""
    event = json.loads((SAMPLES / sample).read_text())
    inbox.ingest_envelope(event_envelope(event))
    [(payload,)] = query(inbox, "select payload from inbox_event")
    assert json.loads(payload) == scrub(event, ScrubbingSettings())


@pytest.mark.parametrize("request_", [
    None, "GET /", {"headers": None}, {"headers": "User-Agent: Chrome"}, {"headers": {"Accept": "*/*"}},
    {"headers": {"User-Agent": ""}}, {"headers": {"User-Agent": "   "}}, {"headers": {"User-Agent": None}},
    {"headers": {"User-Agent": ["a", "b"]}}, {"headers": {"User-Agent": {"name": "Chrome"}}},
    {"headers": [["User-Agent"], "Chrome", ["User-Agent", 1, 2], [1, "Chrome"]]},
    {"headers": {"User-Agent": "Visualshots Browser/1.0"}},  # no rule knows it
    {"headers": {"User-Agent": "\x00\ud800" * 10}},  # what no database stores, nor UTF-8 encodes
])
def test_an_odd_or_missing_header_adds_nothing(request_: Any) -> None:
    event = {"event_id": uuid.uuid4().hex, "platform": "javascript", "request": request_}
    assert not user_agent.fill_from_user_agent(event)
    assert event == {"event_id": event["event_id"], "platform": "javascript", "request": request_}


def test_contexts_of_another_shape_are_left_as_sent() -> None:
    event = {**browser_event({"User-Agent": CHROME_ON_WINDOWS}), "contexts": ["browser", "Chrome"], "tags": "x"}
    assert not user_agent.fill_from_user_agent(event)
    assert event["contexts"] == ["browser", "Chrome"] and event["tags"] == "x"


def test_a_100_kb_header_is_cut_before_it_is_parsed(monkeypatch: pytest.MonkeyPatch, inbox: InboxStore) -> None:
    parsed: list[int] = []
    parse = user_agent.ua_parser.parse
    monkeypatch.setattr(user_agent.ua_parser, "parse", lambda agent: parsed.append(len(agent)) or parse(agent))
    inbox.ingest_envelope(event_envelope(browser_event({"User-Agent": CHROME_ON_WINDOWS + " " + "x" * 100_000})))
    inbox.ingest_envelope(event_envelope(browser_event({"User-Agent": "(" * 100_000})))
    assert parsed == [user_agent.MAX_USER_AGENT, user_agent.MAX_USER_AGENT]
    assert query(inbox, "select count(*) from inbox_event") == [(2,)]
    events = [json.loads(p) for (p,) in query(inbox, "select payload from inbox_event order by id")]
    assert events[0]["contexts"]["browser"]["name"] == "Chrome" and "browser" not in events[1]["contexts"]


def test_a_header_the_parser_fails_on_costs_only_that_events_contexts(
        monkeypatch: pytest.MonkeyPatch, inbox: InboxStore) -> None:
    parse = user_agent.ua_parser.parse

    def failing(agent: str) -> Any:
        if "Boom" in agent:
            raise ValueError("a rule the engine refuses")
        return parse(agent)

    monkeypatch.setattr(user_agent.ua_parser, "parse", failing)
    bodies = [event_envelope(browser_event({"User-Agent": "Boom/1.0"})), event_envelope(browser_event())]
    results = inbox.ingest_batch([Incoming(body) for body in bodies])
    assert [getattr(r, "events", r) for r in results] == [1, 1]
    events = [json.loads(p) for (p,) in query(inbox, "select payload from inbox_event order by id")]
    assert "browser" not in events[0]["contexts"] and events[1]["contexts"]["browser"]["name"] == "Firefox"


def test_through_the_outbox_a_described_event_is_kept_as_its_new_text(inbox: InboxStore, engine: sqlalchemy.Engine) -> None:
    described, unchanged = browser_event(), browser_event({"Accept": "*/*"})
    OutboxStore(engine).add_many([local_row(event_envelope(described)), local_row(event_envelope(unchanged))])
    assert InboxFeeder(OutboxStore(engine), inbox).feed_once() == 2
    rows = query(inbox, "select payload, envelope_id, item_index from inbox_event order by id")
    assert json.loads(rows[0][0])["contexts"]["browser"]["name"] == "Firefox" and rows[0][1:] == (None, None)
    assert rows[1] == ("", 2, 0)  # nothing to add: kept where it is, in its envelope's row
    reader = InboxReader(engine)
    assert reader.event(described["event_id"])["event"]["contexts"]["os"] == {"name": "Linux", "type": "os"}
    assert reader.event(unchanged["event_id"])["event"] == unchanged
