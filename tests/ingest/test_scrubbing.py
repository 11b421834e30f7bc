"""PII scrubbing with Relay's Python API: Sentry's defaults and options, Lookout's additions, items
kept as sent where Relay found nothing, and nothing Relay scrubbed surviving in what is kept."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest
from sentry_relay.processing import pii_strip_event

from app.ingest.incoming import READ_ITEM_TYPES
from plugin_support.envelopes import SAMPLE_PATHS, SAMPLES
from reflex_lookout.scrubbing import relay as scrubbing
from reflex_lookout.scrubbing.pii_config import pii_config
from reflex_lookout.scrubbing.relay import HASHED_DID, SCRUBBED_ITEM_TYPES, UnscrubbableItem, hashed_did, scrub, scrub_item
from reflex_lookout.scrubbing.settings import ScrubbingSettings

ON = ScrubbingSettings()
CARD = "4111 1111 1111 1111"
IBAN = "DE89370400440532013000"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEApemkeymaterial\n-----END RSA PRIVATE KEY-----"


def request_event() -> dict[str, Any]:
    """An event as a server SDK sends it with its client-side scrubbing off: secrets everywhere."""
    return {
        "event_id": "a" * 32, "platform": "python", "timestamp": "2026-11-26T10:00:00Z",
        "logentry": {"message": "paid with %s", "params": [CARD], "formatted": f"paid with {CARD}"},
        "request": {
            "method": "POST", "url": "https://alice:url-pass-1@shop.example/pay?coupon=SPRING&access_token=url-tok-1",
            "query_string": "coupon=SPRING&token=qs-tok-1",
            "headers": {"Authorization": "Bearer bearer-tok-1", "X-Db-Password": "header-pass-1", "Accept": "*/*",
                        "Cookie": "sessionid=cookie-sess-1; theme=dark", "user-agent": "Mozilla/5.0 (X11; Linux x86_64)"},
            "cookies": {"sessionid": "cookie-sess-2", "theme": "dark"},
            "data": {"user": "bob", "password": "data-pass-1", "note": "gift wrap"},
            "env": {"REMOTE_ADDR": "198.51.100.23"},
        },
        "user": {"id": "42", "ip_address": "198.51.100.23", "username": "bob"},
        "exception": [{"type": "ValueError", "value": "payment refused", "stacktrace": {"frames": [
            {"function": "pay", "in_app": True, "vars": {"api_key": "vars-key-1", "amount": 12}}]}}],
        "tags": {"route": "/pay"},
        "extra": {"card": CARD, "iban": IBAN, "pem": PEM, "dsn": "postgres://app:dsn-pass-1@db/shop",
                  "bearer": "bearer-key-1", "set-cookie": "sid=set-cookie-1", "mysql_pwd": "mysql-pass-1",
                  "favourite_colour": "teal", "order_token": "ord-123", "cart": {"items": 3, "secret": "nested-1"}},
    }


SECRETS = ["url-pass-1", "url-tok-1", "qs-tok-1", "bearer-tok-1", "header-pass-1", "cookie-sess-1", "cookie-sess-2",
           "data-pass-1", "vars-key-1", CARD, CARD.replace(" ", ""), IBAN, "pemkeymaterial", "dsn-pass-1",
           "bearer-key-1", "set-cookie-1", "mysql-pass-1", "nested-1"]


def test_the_defaults_scrub_credentials_cards_ibans_keys_and_url_passwords() -> None:
    event = request_event()
    before = copy.deepcopy(event)
    scrubbed = scrub(event, ON)
    assert event == before  # the event itself is left as it was
    text = json.dumps(scrubbed)
    assert [secret for secret in SECRETS if secret in text] == []
    request = scrubbed["request"]
    assert request["url"] == "https://alice:[Filtered]@shop.example/pay?coupon=SPRING&access_token=[Filtered]"
    assert request["headers"]["Authorization"] == request["headers"]["X-Db-Password"] == "[Filtered]"
    assert request["headers"]["Cookie"] == "[Filtered]" and request["headers"]["Accept"] == "*/*"
    assert request["data"] == {"user": "bob", "password": "[Filtered]", "note": "gift wrap"}
    assert request["cookies"] == {"sessionid": "[Filtered]", "theme": "dark"}
    assert request["query_string"] == [["coupon", "SPRING"], ["token", "[Filtered]"]]  # Relay's pairs: it read the string
    assert scrubbed["logentry"]["formatted"] == "paid with [creditcard]"  # a message's card: replaced, not the message
    assert scrubbed["extra"]["pem"] == "-----BEGIN RSA PRIVATE KEY-----\n[Filtered]\n-----END RSA PRIVATE KEY-----"
    assert scrubbed["extra"]["dsn"] == "postgres://app:[Filtered]@db/shop"
    assert scrubbed["extra"]["cart"] == {"items": 3, "secret": "[Filtered]"}
    # what is not a secret is kept, as sent: the user's address too (scrub_ip_addresses is off)
    assert scrubbed["user"] == event["user"] and scrubbed["tags"] == {"route": "/pay"}
    assert scrubbed["request"]["env"] == {"REMOTE_ADDR": "198.51.100.23"}
    assert scrubbed["extra"]["favourite_colour"] == "teal"
    assert scrubbed["request"]["headers"]["user-agent"] == "Mozilla/5.0 (X11; Linux x86_64)"
    # shapes stay the SDK's: headers a mapping, the exception chain a bare list
    assert isinstance(scrubbed["exception"], list) and scrubbed["exception"][0]["value"] == "payment refused"
    assert scrubbed["exception"][0]["stacktrace"]["frames"][0]["vars"] == {"api_key": "[Filtered]", "amount": 12}


def test_ip_addresses_go_only_when_asked() -> None:
    scrubbed = scrub(request_event(), ScrubbingSettings(scrub_ip_addresses=True))
    assert "198.51.100.23" not in json.dumps(scrubbed)
    assert scrubbed["user"] == {"id": "42", "ip_address": None, "username": "bob"}


def test_more_sensitive_fields_and_safe_fields() -> None:
    settings = ScrubbingSettings(sensitive_fields=("favourite_colour",), safe_fields=("order_token", "set-cookie"))
    extra = scrub(request_event(), settings)["extra"]
    assert extra["favourite_colour"] == "[Filtered]"
    assert extra["order_token"] == "ord-123" and extra["set-cookie"] == "sid=set-cookie-1"  # safe, though named so
    assert scrub(request_event(), ON)["extra"]["order_token"] == "[Filtered]"
    # a safe field is left out of Lookout's own rules too (the request's URL is `url`)
    url = scrub(request_event(), ScrubbingSettings(safe_fields=("url",)))["request"]["url"]
    assert url == request_event()["request"]["url"]


def test_scrubbing_off_or_nothing_to_scrub_gives_the_same_event() -> None:
    event = request_event()
    assert scrub(event, ScrubbingSettings(scrub_data=False)) is event
    clean = {"event_id": "b" * 32, "timestamp": 1.5, "exception": {"values": [{"type": "E", "value": "boom"}]},
             "request": {"headers": {"user-agent": "x", "accept": "*/*"}, "url": "https://shop.example/a?page=2"},
             "contexts": {"trace": {"trace_id": "c" * 32, "span_id": "d" * 16}}, "tags": [["b", "1"], ["a", "2"]],
             "user": {"id": 5}, "breadcrumbs": {"values": []}}
    assert scrub(clean, ON) is clean  # Relay's reshaping (pairs, {"values"}, "5", a context's type) is not kept


def test_headers_named_twice_but_for_case_are_kept_as_relay_wrote_them() -> None:
    scrubbed = scrub({"request": {"headers": {"X-Note": CARD, "x-note": "hello"}}}, ON)
    assert scrubbed["request"]["headers"] == [["X-Note", "[Filtered]"], ["X-Note", "hello"]]


def test_what_relay_refuses_or_does_not_keep_is_not_kept() -> None:
    event = {"contexts": {"trace": {"trace_id": "not an id: password=x", "span_id": "d" * 16}},
             "message": f"legacy message with {CARD}", "_meta": {"extra": {"": {"val": "what the SDK removed"}}}}
    scrubbed = scrub(event, ON)
    # an invalid id is refused (and where something changed, what Relay adds comes along: a context's type)
    assert scrubbed["contexts"]["trace"] == {"trace_id": None, "span_id": "d" * 16, "type": "trace"}
    # the legacy `message` is read as `logentry`, and an SDK's `_meta` is Relay's to read, not data
    assert scrubbed == {"contexts": scrubbed["contexts"], "logentry": {"formatted": "legacy message with [creditcard]"}}


def test_log_lines_sessions_and_user_reports_are_scrubbed_too() -> None:
    logs = {"items": [
        {"timestamp": 1.0, "level": "info", "body": f"paid {CARD} for a@b.example",
         "attributes": {"db.password": {"type": "string", "value": "log-pass-1"}, "count": {"type": "integer", "value": 3}}},
        {"timestamp": 2.0, "level": "info", "body": "nothing here", "attributes": {"route": "/a"}},
    ]}
    scrubbed = scrub_item("log", logs, ON)
    first, second = scrubbed["items"]
    assert first["body"] == "paid [Filtered] for [email]"  # Relay's rules for any string, then a message's
    assert first["attributes"] == {"db.password": {"type": "string", "value": "[Filtered]"},
                                   "count": {"type": "integer", "value": 3}}
    assert second is logs["items"][1]
    session = {"sid": "s", "did": "bob", "attrs": {"release": "1", "ip_address": "198.51.100.23"}}
    hashed = scrub_item("session", session, ON)  # a user's distinct id: hashed, so that users can be counted
    assert hashed == {"sid": "s", "did": hashed_did("bob"), "attrs": session["attrs"]}
    assert hashed["did"].startswith(HASHED_DID) and len(hashed["did"]) == len(HASHED_DID) + 32 and "bob" not in hashed["did"]
    assert hashed_did("bob") != hashed_did("alice") and hashed_did(hashed["did"]) == hashed["did"]  # hashed once
    assert scrub_item("session", hashed, ON) is hashed
    anonymous = {"sid": "s", "attrs": {"release": "1"}}
    assert scrub_item("session", anonymous, ON) is anonymous
    aggregates = {"aggregates": [{"started": "2026-11-28T10:00:00Z", "did": "bob", "exited": 2}], "attrs": {"release": "1"}}
    assert scrub_item("sessions", aggregates, ON)["aggregates"] == [{"started": "2026-11-28T10:00:00Z",
                                                                      "did": hashed_did("bob"), "exited": 2}]
    assert scrub_item("session", session, ScrubbingSettings(scrub_data=False)) is session
    assert scrub_item("session", session, ScrubbingSettings(scrub_ip_addresses=True))["attrs"]["ip_address"] == "[ip]"
    report = {"event_id": "e" * 32, "name": "Bob", "email": "bob@example.org", "comments": f"my card {CARD} was charged"}
    assert scrub_item("user_report", report, ON)["comments"] == "my card [Filtered] was charged"
    counts = {"discarded_events": [{"reason": "queue_overflow", "category": "error", "quantity": 2}]}
    assert scrub_item("client_report", counts, ON) is counts  # an SDK's counts: no one's data
    assert set(READ_ITEM_TYPES) <= set(SCRUBBED_ITEM_TYPES)  # every item the inbox reads is scrubbed


def test_a_log_lines_body_and_attributes_and_fields_are_each_scrubbed_whichever_alone_needs_it() -> None:
    """Each part of a line is applied on its own: a line whose body alone holds a card, one whose
    attributes alone hold a password, one whose other fields alone do (issue 36, item 11)."""
    logs = {"items": [
        {"timestamp": 1.0, "level": "info", "body": f"paid with {CARD}", "attributes": {"route": "/pay"}},
        {"timestamp": 2.0, "level": "info", "body": "logged in", "attributes": {"password": "attr-pass-1"}},
        {"timestamp": 3.0, "level": "info", "body": "logged out", "extra": {"password": "field-pass-2"}},
        {"timestamp": 4.0, "level": "info", "body": "nothing", "attributes": {"route": "/a"}},
    ]}
    first, second, third, fourth = scrub_item("log", logs, ON, json.dumps(logs).encode())["items"]
    assert first == {**logs["items"][0], "body": "paid with [Filtered]"}
    assert second == {**logs["items"][1], "attributes": {"password": "[Filtered]"}}
    assert third == {**logs["items"][2], "extra": {"password": "[Filtered]"}}
    assert fourth is logs["items"][3]


def test_the_config_is_made_once_per_settings() -> None:
    pii_config.cache_clear()
    settings = ScrubbingSettings(sensitive_fields=("ssn",))
    assert pii_config(settings) is pii_config(ScrubbingSettings(sensitive_fields=("ssn",)))
    assert pii_config.cache_info().misses == 1
    assert pii_config(ScrubbingSettings(scrub_data=False)) is None


def test_an_event_relay_cannot_read_is_refused_with_a_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(config: str, event: Any, json_dumps: Any) -> Any:
        return pii_strip_event(config, b"{not json", json_dumps=lambda value: value)

    monkeypatch.setattr(scrubbing, "pii_strip_event", broken)
    with pytest.raises(UnscrubbableItem, match=r"^The item could not be scrubbed \(InvalidJsonError\)\.$"):
        scrub({"extra": {}}, ON)


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=lambda path: str(path.relative_to(SAMPLES)))
def test_in_every_sample_nothing_relay_scrubbed_survives(path) -> None:
    """Each sample with secrets put in random places, 20 times: whatever is gone from Relay's own
    output is gone from what Lookout keeps; a sample Relay finds nothing in is kept as it is."""
    sample = json.loads(path.read_text())
    if not isinstance(sample, dict):
        return
    config = json.loads(pii_config(ON) or "{}")
    rng = random.Random(path.name)
    for attempt in range(20):
        event = copy.deepcopy(sample)
        places = _dicts(event)
        secrets = []
        for n in range(3):
            place, secret = rng.choice(places), f"secret-{attempt}-{n}"
            key = rng.choice(["password", "api_key", "X-Bearer", "note", "message", "formatted", "url", "data"])
            place[key] = {"url": f"https://u:{secret}@h/x", "note": f"{secret} {CARD}"}.get(key, secret)
            secrets.append(CARD if key == "note" else secret)
        relay = json.dumps(pii_strip_event(config, event))
        kept = json.dumps(scrub(event, ON))
        assert [s for s in secrets if s not in relay and s in kept] == [], (attempt, kept)


def _dicts(node: Any) -> list[dict]:
    found = [node] if isinstance(node, dict) else []
    for child in node.values() if isinstance(node, dict) else node if isinstance(node, list) else []:
        found += _dicts(child)
    return found
