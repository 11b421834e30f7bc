"""Each of Sentry's inbound filters, as Relay's `relay-filter` matches it: real events from the shared
samples where one fits, the cases of Relay's own tests where none does, and the real sentry-sdk's
transactions; each filter off keeps what it would drop."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
import sentry_sdk

from app.ingest.inbound_filters import dropped_by
from app.projects.filter_options import LABELS, FilterOptions
from plugin_support.envelopes import SAMPLES
from reflex_lookout.protocol import envelope
from tests.factories import NO_FILTERS, error, sentry_sdk_envelopes

DEFAULTS = FilterOptions()
OLD_FIREFOX = "glitchtip/dotnet_divide_zero.json"  # Firefox 76, a .NET page on http://localhost:5000/
NEW_FIREFOX = "bugsink/uglifyjs-minified-sourcemaps-in-bundle.json"  # Firefox 135, release my-project-name@2.3.12
FROM_LOOPBACK = "bugsink/logmessage-w-params.json"  # user.ip_address 127.0.0.1
SHOP = "bugsink/visualshots-rich.json"  # user.ip_address 203.0.113.42, release visualshots@2026.06.20+abc…


def sample(name: str) -> dict[str, Any]:
    return json.loads((SAMPLES / name).read_text())


def only(name: str, **values: object) -> FilterOptions:
    """The filter `name` alone, on (a switch) or with `values` (a list)."""
    return dataclasses.replace(NO_FILTERS, **(values or {name: True}))


def with_agent(agent: str) -> dict[str, Any]:
    return {**error("x"), "request": {"headers": {"User-Agent": agent}}}


def js_error(value: str, kind: str = "Error", abs_path: str = "https://shop.example.com/app.js") -> dict[str, Any]:
    return {"exception": {"values": [{"type": kind, "value": value, "stacktrace": {"frames": [
        {"abs_path": abs_path, "function": "run"}, {"abs_path": "<anonymous>"}]}}]}}


def test_a_new_projects_filters_drop_an_old_browsers_error_and_keep_a_current_ones() -> None:
    assert dropped_by("event", sample(OLD_FIREFOX), DEFAULTS) == "legacy_browsers"
    assert dropped_by("event", sample(NEW_FIREFOX), DEFAULTS) is None
    assert dropped_by("event", sample(OLD_FIREFOX), NO_FILTERS) is None


@pytest.mark.parametrize("agent", [
    "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.0; Trident/4.0)",
    "Mozilla/5.0 (Windows NT 6.3; Trident/7.0; rv:11.0) like Gecko",  # IE 11
    "Mozilla/5.0 (compatible; MSIE 9.0; Windows Phone OS 7.5; Trident/5.0; IEMobile/9.0; NOKIA; Lumia 710)",
    "Opera/9.80 (J2ME/MIDP; Opera Mini/7.0.32796/59.323; U; fr) Presto/2.12.423 Version/12.16",
    "Mozilla/5.0 (Linux; U; Android 3.2; nl-nl; GT-P6800 Build/HTJ85B) AppleWebKit/534.13 (KHTML, like Gecko) "
    "Version/4.0 Safari/534.13",
    "Mozilla/5.0 (Windows NT 6.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/110.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.6 Safari/605.1.15",
])
def test_legacy_browsers(agent: str) -> None:
    assert dropped_by("event", with_agent(agent), only("legacy_browsers")) == "legacy_browsers"
    assert dropped_by("transaction", with_agent(agent), only("legacy_browsers")) == "legacy_browsers"


@pytest.mark.parametrize("agent", [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15",
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
    "python-requests/2.32.3", "", "Mozilla/5.0 (compatible; MSIE 99999999999999999999.0)",
])
def test_current_and_unknown_browsers_are_kept(agent: str) -> None:
    assert dropped_by("event", with_agent(agent), only("legacy_browsers")) is None


@pytest.mark.parametrize("agent", [
    "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "AdsBot-Google (+http://www.google.com/adsbot.html)",
    "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Twitterbot/1.0", "spider;", "BingPreview",
    "Mozilla/5.0 (compatible; HubSpot Crawler; web-crawlers@hubspot.com)", "AWS Security Scanner",
])
def test_web_crawlers(agent: str) -> None:
    assert dropped_by("event", with_agent(agent), only("web_crawlers")) == "web_crawlers"


@pytest.mark.parametrize("agent", [
    "Visualshots Browser/1.0", "opera", "APIs-Google (+https://developers.google.com/webmasters/APIs-Google.html)",
    "Mozilla/5.0 (Windows NT 6.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0.2228.0 Safari/537.36",
])
def test_browsers_are_no_crawlers(agent: str) -> None:
    assert dropped_by("event", with_agent(agent), only("web_crawlers")) is None


@pytest.mark.parametrize("event", [
    js_error("bad news, we have a fb_xd_fragment"), js_error("Extension context invalidated."),
    js_error("TypeError: can't access dead object"),
    js_error("x", abs_path="chrome-extension://abcdefgh/content.js"), js_error("x", abs_path="moz-extension://a/b.js"),
    js_error("x", abs_path="safari-web-extension://a/b.js"), js_error("x", abs_path="https://fscr.kaspersky-labs.com/main.js"),
])
def test_browser_extensions(event: dict[str, Any]) -> None:
    assert dropped_by("event", event, only("browser_extensions")) == "browser_extensions"


def test_errors_of_the_page_itself_are_no_extensions() -> None:
    for event in (js_error("some perfectly reasonable value"), js_error("x", abs_path="https://shop.example.com/chrome-extension://"),
                  sample(NEW_FIREFOX), sample("sentry/javascript-xbrowser-chrome.json")):
        assert dropped_by("event", event, only("browser_extensions")) is None


def test_localhost() -> None:
    for name in (FROM_LOOPBACK, OLD_FIREFOX):  # by the user's address, by the page's host
        assert dropped_by("event", sample(name), only("localhost")) == "localhost"
    assert dropped_by("event", {"user": {"ip_address": "::1"}}, only("localhost")) == "localhost"
    for event in (sample(SHOP), sample(NEW_FIREFOX), {"request": {"url": "http://localhost.example.com:8080/"}},
                  {"request": {"url": "http://[::1"}}, {"user": {"ip_address": "{{auto}}"}}):
        assert dropped_by("event", event, only("localhost")) is None


def test_client_ips() -> None:
    options = only("client_ips", client_ips=("198.51.100.9", "203.0.113.0/24", "2001:db8::/32"))
    assert dropped_by("event", sample(SHOP), options) == "client_ips"
    assert dropped_by("event", {"user": {"ip_address": "2001:db8::5"}}, options) == "client_ips"
    for event in (sample(FROM_LOOPBACK), sample(NEW_FIREFOX), {"user": {"ip_address": "203.0.114.1"}}):
        assert dropped_by("event", event, options) is None


def test_releases() -> None:
    options = only("releases", releases=("VISUALSHOTS@2026.*", "my-project-name@2.3.1"))
    assert dropped_by("event", sample(SHOP), options) == "releases"
    assert dropped_by("event", sample(NEW_FIREFOX), options) is None  # 2.3.12: a glob matches the whole release


def test_error_messages() -> None:
    options = only("error_messages", error_messages=("*by zero", "TiktokBusinessException: *", "Error during cleanup*"))
    for name in ("sentry/java-minimal.json", "bugsink/top-level-message.json", FROM_LOOPBACK):  # type: value; message
        assert dropped_by("event", sample(name), options) == "error_messages", name
    assert dropped_by("event", sample(NEW_FIREFOX), options) is None
    assert dropped_by("event", {"message": "error during CLEANUP of x"}, options) == "error_messages"


def test_error_messages_read_every_exception_of_a_chain_up_to_twenty() -> None:
    """A chained error (the SDKs send the cause first, the raised one last) is dropped when any of its
    first 20 exceptions matches, the outer one too, as Relay's filter reads them all (issue 36, 11)."""
    options = only("error_messages", error_messages=("TimeoutError: upstream*",))
    chain = [{"type": "KeyError", "value": "'cart'"}, {"type": "ValueError", "value": "bad cart"},
             {"type": "TimeoutError", "value": "upstream took 30 s"}]
    assert dropped_by("event", {"exception": {"values": chain}}, options) == "error_messages"
    assert dropped_by("event", {"exception": {"values": chain[:2]}}, options) is None
    assert dropped_by("event", {"exception": {"values": [chain[2], *chain[:2]]}}, options) == "error_messages"  # the first
    padded = [{"type": "KeyError", "value": str(n)} for n in range(19)]
    assert dropped_by("event", {"exception": {"values": [*padded, chain[2]]}}, options) == "error_messages"  # the 20th
    assert dropped_by("event", {"exception": {"values": [*padded, chain[0], chain[2]]}}, options) is None  # the 21st


def test_health_check_transactions_from_the_real_sentry_sdk() -> None:
    names = ("GET /healthz", "/api/heartbeat/1", "/ping", "/checkout", "/ready/now")
    with sentry_sdk_envelopes(traces_sample_rate=1.0) as bodies:
        for name in names:
            with sentry_sdk.start_transaction(name=name):
                pass
        sentry_sdk.flush()
    transactions = [json.loads(item.payload) for body in bodies for item in envelope.parse(body, 1 << 20).items
                    if item.type == "transaction"]
    assert [t["transaction"] for t in transactions] == list(names)
    assert [dropped_by("transaction", t, only("health_checks")) for t in transactions] == [
        "health_checks", "health_checks", "health_checks", None, None]
    assert dropped_by("event", {**error("x"), "transaction": "/healthz"}, only("health_checks")) is None  # an error


def test_react_hydration_errors() -> None:
    hydration = js_error("Minified React error #418; visit https://react.dev/errors/418?args[]=HTML for the full message")
    old = js_error("Minified React error #423; visit https://reactjs.org/docs/error-decoder.html?invariant=423 for more")
    other = js_error("Minified React error #310; visit https://react.dev/errors/310 for the full message")
    assert [dropped_by("event", e, only("react_hydration")) for e in (hydration, old, other)] == [
        "react_hydration", "react_hydration", None]


def test_chunk_load_errors() -> None:
    webpack = js_error("Loading chunk 3662 failed.\n(error: https://shop.example.com/_next/static/chunks/29107295.js)",
                       kind="ChunkLoadError")
    promise = js_error("Uncaught (in promise): ChunkLoadError: Loading chunk 7 failed.")
    other = js_error("Loading chunk 7 failed.", kind="TypeError")
    assert [dropped_by("event", e, only("chunk_load")) for e in (webpack, promise, other)] == ["chunk_load", "chunk_load", None]


def test_the_first_filter_in_relays_order_counts_and_other_items_are_never_filtered() -> None:
    event = {**sample(SHOP), "request": {"headers": {"User-Agent": "Googlebot"}}}
    everything = dataclasses.replace(FilterOptions(), localhost=True, client_ips=("203.0.113.42",))
    assert dropped_by("event", event, everything) == "client_ips" == next(iter(LABELS))
    assert dropped_by("event", event, dataclasses.replace(everything, client_ips=())) == "web_crawlers"
    for item_type in ("log", "feedback", "session", "attachment"):
        assert dropped_by(item_type, event, everything) is None


def test_an_event_of_any_shape_is_matched_without_an_error() -> None:
    shapes: list[dict[str, Any]] = [{}, {"exception": None}, {"exception": [{"value": 3}]}, {"exception": {"values": "x"}},
                                    {"user": "me", "request": [1]}, {"message": {"formatted": None}}, {"release": 1.5}]
    switches = {name: True for name in ("localhost", "health_checks", "react_hydration", "chunk_load")}
    everything = dataclasses.replace(FilterOptions(), **switches, error_messages=("*",), releases=("*",),
                                     client_ips=("0.0.0.0/0",))
    for event in shapes:
        before = copy.deepcopy(event)
        assert dropped_by("event", event, everything) in (None, "error_messages")
        assert event == before  # read, never changed
