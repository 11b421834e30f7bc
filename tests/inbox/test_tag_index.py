"""The tag index: the tags Sentry derives and an event's own, from the real sentry-sdk's events,
counted per issue at ingest and bounded as Relay bounds them."""

from __future__ import annotations

import sentry_sdk

from app.inbox.tag_index import bounded, derived_tags
from app.ingest.incoming import Incoming
from app.ingest.store import InboxStore
from app.ingest.tag_counter import count_queued
from tests.factories import error, event_envelope, query, sentry_sdk_envelopes, store_all


def raise_and_capture(message: str) -> None:
    try:
        raise KeyError(message)
    except KeyError as exc:
        sentry_sdk.capture_exception(exc)


def test_sentry_sdk_events_are_counted_per_issue_by_tag(inbox: InboxStore) -> None:
    with sentry_sdk_envelopes(release="shop@2.1", environment="production", server_name="web-1") as bodies:
        sentry_sdk.set_tag("customer.tier", "gold")
        sentry_sdk.set_user({"id": "42", "email": "ada@example.com"})
        raise_and_capture("cart")
        sentry_sdk.set_tag("customer.tier", "silver")
        raise_and_capture("cart")
    store_all(inbox, bodies)
    rows = dict(((key, value), count) for key, value, count in query(
        inbox, "select key, value, count from inbox_issue_tag"))
    assert rows[("customer.tier", "gold")] == 1 and rows[("customer.tier", "silver")] == 1
    assert rows[("release", "shop@2.1")] == 2 and rows[("environment", "production")] == 2
    assert rows[("server_name", "web-1")] == 2 and rows[("level", "error")] == 2
    assert rows[("user", "id:42")] == 2 and rows[("user.email", "ada@example.com")] == 2
    assert rows[("sdk.name", "sentry.python")] == 2 and rows[("handled", "yes")] == 2
    [(issues, first, last)] = query(
        inbox, "select count(distinct issue_id), min(first_seen), max(last_seen) from inbox_issue_tag")
    assert issues == 1 and 0 < first <= last


def test_tags_relay_would_drop_are_not_indexed() -> None:
    event = {**error("x"), "tags": {"k" * 33: "long key", "fine": "v" * 201, "two\nlines": "x", "empty": "",
                                    "ok": "yes", "nested": {"a": 1}}}
    tags = dict(derived_tags(event))
    assert tags["ok"] == "yes" and "fine" not in tags and "empty" not in tags and "nested" not in tags
    assert not any(len(key) > 32 or "\n" in key for key in tags)
    assert bounded("k" * 32, "v" * 200) == ("k" * 32, "v" * 200)
    assert bounded("browser", "Chrome\n120") is None


def test_a_browser_events_contexts_give_its_browser_os_and_device_tags() -> None:
    event = {**error("x"), "platform": "javascript", "request": {"url": "https://shop.example/cart?id=1"},
             "contexts": {"browser": {"name": "Chrome", "version": "120.0"}, "os": {"name": "Windows", "version": "10"},
                          "device": {"model": "Pixel 7"}, "runtime": {"name": "CPython", "version": "3.11.2"}},
             "exception": {"values": [{"type": "TypeError", "value": "x", "mechanism": {"type": "onerror", "handled": False}}]}}
    tags = dict(derived_tags(event))
    assert tags["browser"] == "Chrome 120.0" and tags["browser.name"] == "Chrome"
    assert tags["os"] == "Windows 10" and tags["os.name"] == "Windows" and tags["device"] == "Pixel 7"
    assert tags["runtime"] == "CPython 3.11.2" and tags["runtime.name"] == "CPython"
    assert tags["url"] == "https://shop.example/cart" and tags["handled"] == "no" and tags["mechanism"] == "onerror"


def test_a_batch_counts_each_tag_once_per_event(inbox: InboxStore) -> None:
    same = [event_envelope(error("'cart'")) for _ in range(3)]
    inbox.ingest_batch([Incoming(body, "", None, None) for body in same])
    count_queued(inbox.engine)  # the tag counter's step (app/ingest/tag_counter.py)
    assert query(inbox, "select count from inbox_issue_tag where key = 'level'") == [(3,)]
