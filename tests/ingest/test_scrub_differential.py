"""The scrubbing shortcut against Relay itself (issue 35): for every event of the shared samples,
every envelope the real sentry-sdk makes here, 10,200 generated items holding secrets of every
kind Relay knows, under every key spelling and in every place, and 2,100 items holding one secret
and nothing else, what is kept with the prefilter
(reflex_lookout/scrubbing/prefilter.py) is identical to what is kept when Relay's
`pii_strip_event` reads every item (scrubbing/relay.py); wherever the prefilter lets an item through
unread, Relay's rules match nothing in it (no rule's remark in its `_meta`); and no planted secret
survives. A prefilter that passed an item holding something a rule matches fails the second check,
whatever the first says."""

from __future__ import annotations

import json
import string
import uuid
from typing import Any

import pytest
import sentry_sdk
from hypothesis import HealthCheck, given, settings, strategies as st
from sentry_relay.processing import pii_strip_event
from sentry_sdk.envelope import Envelope as SdkEnvelope
from sentry_sdk.transport import Transport

from plugin_support.envelopes import SAMPLE_PATHS
from reflex_lookout.protocol import envelope
from reflex_lookout.scrubbing.envelope import scrub_envelope
from reflex_lookout.scrubbing.pii_config import LOG_BODIES, pii_config
from reflex_lookout.scrubbing.prefilter import holds_nothing_to_scrub
from reflex_lookout.scrubbing.relay import SCRUBBED_ITEM_TYPES, SESSIONS, messages_of, scrub_item
from reflex_lookout.scrubbing.settings import ScrubbingSettings

DEFAULTS = ScrubbingSettings()
CARD, IBAN = "4111 1111 1111 1111", "DE89370400440532013000"
SETTINGS = [
    DEFAULTS,
    ScrubbingSettings(scrub_ip_addresses=True),
    ScrubbingSettings(sensitive_fields=("favourite_colour", "Nickname"), safe_fields=("order_token",)),
]


def relay_remarks(meta: Any) -> list[str]:
    """The rule ids of every remark in Relay's `_meta` (its own, "!..." ones, left out)."""
    found: list[str] = []
    if isinstance(meta, dict):
        for key, value in meta.items():
            if key == "" and isinstance(value, dict):
                found += [str(r[0]) for r in value.get("rem") or [] if r and not str(r[0]).startswith("!")]
            else:
                found += relay_remarks(value)
    return found


def relay_reads(item_type: str, payload: dict[str, Any], config: str) -> list[str]:
    """What rules Relay applies to the item as `scrub_item` gives it to Relay (events as events, a
    log item's lines and any other item as `extra`)."""
    if item_type in ("event", "transaction", "feedback"):
        as_event = payload
    elif item_type == "log":
        lines = payload.get("items") if isinstance(payload.get("items"), list) else []
        as_event = {"extra": {LOG_BODIES: [line.get("body") if isinstance(line, dict) else None for line in lines],
                              "all": payload}}
    else:
        as_event = {"extra": payload}
    out = pii_strip_event(config, as_event, json_dumps=lambda v: v if isinstance(v, str) else json.dumps(v))
    return relay_remarks(out.get("_meta"))


def check(item_type: str, raw: bytes, scrubbing: ScrubbingSettings, secrets: tuple[str, ...] = ()) -> bool:
    """The three checks of the module's docstring for one item; whether the prefilter passed it."""
    payload = json.loads(raw)
    fast = scrub_item(item_type, payload, scrubbing, raw)
    passed = holds_nothing_to_scrub(raw, scrubbing, messages_of(item_type, payload))  # as scrub_item asks
    config = pii_config(scrubbing)
    if passed and config is not None:
        # Where the prefilter passes, Relay is not asked: what Relay would have kept must be the same.
        # (Where it does not, both are the very same call to Relay: nothing to compare.)
        full = scrub_item(item_type, payload, scrubbing)
        assert json.dumps(fast, sort_keys=True) == json.dumps(full, sort_keys=True)
        assert relay_reads(item_type, payload, config) == [], raw[:300]
        # kept as sent, but for an SDK's `_meta` and a session's `did`, which are never kept
        assert fast is payload or "_meta" in payload or (item_type in SESSIONS and "did" in payload)
    kept = json.dumps(fast, ensure_ascii=False)
    for secret in secrets:
        assert secret not in kept, (secret, kept[:500])
    return passed


# -- the shared samples ----------------------------------------------------------------------------


@pytest.mark.parametrize("scrubbing", SETTINGS, ids=["defaults", "ip-addresses", "fields"])
def test_every_sample_event_is_kept_as_relay_keeps_it(scrubbing: ScrubbingSettings) -> None:
    passed = 0
    for path in SAMPLE_PATHS:
        raw = path.read_bytes()
        if not isinstance(json.loads(raw), dict):
            continue
        passed += check("event", raw, scrubbing)
    assert passed > 50  # the shortcut is taken for most of them (115 of 190 with the defaults)


# -- what the real sentry-sdk sends ----------------------------------------------------------------


class Keep(Transport):
    def __init__(self, options: dict[str, Any]) -> None:
        super().__init__(options)
        self.envelopes: list[bytes] = []

    def capture_envelope(self, made: SdkEnvelope) -> None:
        self.envelopes.append(made.serialize())


# Made at run time: the SDK sends its frames' source lines, which are code, not data, and Relay keeps them.
MARK = uuid.uuid4().hex[:8]
SDK_SECRETS = {name: f"{name}-{MARK}" for name in (
    "crumb-pass", "crumb-tok", "local-api-key", "local-pass", "msg-bearer", "url-pass", "span-pass", "tx-secret", "log-key")}


def sdk_envelopes() -> list[bytes]:
    """Envelopes of errors (with local variables), messages, logs, transactions with spans and sessions."""
    keep = Keep({"dsn": "http://key@127.0.0.1:1/1"})
    secret = SDK_SECRETS
    with sentry_sdk.new_scope() as scope:
        client = sentry_sdk.Client("http://key@127.0.0.1:1/1", transport=keep, traces_sample_rate=1.0,
                                   include_local_variables=True, send_default_pii=True, enable_logs=True,
                                   release="shop@1.0", environment="test")
        scope.set_client(client)
        scope.set_user({"id": "42", "email": "bob@shop.example", "ip_address": "198.51.100.23"})
        scope.set_tag("route", "/pay")
        scope.set_context("payment", {"card": CARD, "iban": IBAN})
        sentry_sdk.add_breadcrumb(category="auth", message="login",
                                  data={"token": secret["crumb-tok"], "password": secret["crumb-pass"]})
        api_key, password, note = secret["local-api-key"], secret["local-pass"], "nothing here"  # noqa: F841 (frame variables)
        try:
            raise ValueError(f"refused: {note}")
        except ValueError as exc:
            sentry_sdk.capture_exception(exc)
        sentry_sdk.capture_message(f"Authorization: Bearer {secret['msg-bearer']} for https://u:{secret['url-pass']}@db.example/x")
        with sentry_sdk.start_transaction(name="checkout", op="http.server") as transaction:
            with sentry_sdk.start_span(op="db", name="select") as span:
                span.set_data("db.password", secret["span-pass"])
                span.set_data("rows", 3)
            transaction.set_data("secret", secret["tx-secret"])
        sentry_sdk.logger.info("user {user} paid with {card}", user="bob", card=CARD, attributes={"api_key": secret["log-key"]})
        sentry_sdk.logger.warning("a quiet line", attributes={"count": 3})
        sentry_sdk.start_session()
        sentry_sdk.end_session()
        client.close()  # flushed, and its threads stopped (they would draw random numbers in later tests)
    return keep.envelopes


def test_every_envelope_of_the_real_sdk_is_kept_as_relay_keeps_it() -> None:
    made = sdk_envelopes()
    types = set()
    for body in made:
        parsed = envelope.parse(body, 1 << 24)
        scrubbed = envelope.serialize(scrub_envelope(parsed, DEFAULTS))
        for secret in [*SDK_SECRETS.values(), CARD, CARD.replace(" ", ""), IBAN]:
            assert secret.encode() not in scrubbed, secret
        for item in parsed.items:
            types.add(item.type)
            if item.type in SCRUBBED_ITEM_TYPES:
                check(item.type, item.payload, DEFAULTS)
    assert {"event", "transaction", "log", "session"} <= types


# -- generated items -------------------------------------------------------------------------------

SECRET_KEYS = ["password", "Password", "PASSWORD", "db_password", "user-password", "passwd", "secret", "client_secret",
               "api_key", "API-KEY", "api-key", "apikey", "X-Api-Key", "auth", "Authorization", "oauth_state",
               "credentials", "mysql_pwd", "privatekey", "private_key", "private-key", "token", "access_token",
               "csrfToken", "otp", "two_factor", "two-factor", "bearer", "Cookie", "set-cookie", "sessionid",
               "favourite_colour", "paſsword", "ſecret", "KEY"]
PLAIN_KEYS = ["user", "note", "amount", "route", "colour", "data", "values", "name", "id", "query", "body", "order_token",
              "message", "value", "type", "url", "version", "city", "ua", "ref"]


ALNUM = string.ascii_letters + string.digits


def chars(alphabet: str, least: int, most: int) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=least, max_size=most)


def digits_of(count: int) -> st.SearchStrategy[str]:
    return chars(string.digits, count, count)


def values_with_secrets() -> st.SearchStrategy[str]:
    """Secrets alone, inside other text, or other text alone."""
    near = st.text(string.ascii_letters + string.digits + " -_.:/@=+,;'\"\\\t\n", max_size=24)
    return st.one_of(secrets(), st.builds(lambda a, s, b: a + s + b, near, secrets(), near), near)


def secrets() -> st.SearchStrategy[str]:
    """Text Relay's value rules match (a card, an IBAN, a social security number, a PEM key, a URL's
    password, a bearer token, an e-mail address, a token assignment), spelled many ways, often inside
    other text."""
    digits = st.text(string.digits, min_size=1, max_size=4)
    gap = st.sampled_from(["", " ", "-", "\n", "\t", "  ", "\u00a0", "\u2003"])
    card = st.builds(lambda prefix, rest, g: prefix + "".join(g + d for d in rest),
                     st.sampled_from(["4111", "4539", "5500", "5105", "6011", "6500", "378", "349"]),
                     st.lists(st.sampled_from(string.digits), min_size=11, max_size=13), gap)
    secret = st.one_of(
        card,
        st.builds(lambda c, d, r: c + d + r, chars(string.ascii_uppercase, 2, 2), digits_of(2), chars(ALNUM, 11, 20)),  # IBAN
        st.builds(lambda a, b, c: f"{a}-{b}-{c}", digits_of(3), digits_of(2), digits_of(4)),  # US SSN
        st.builds(lambda kind, body: f"-----BEGIN {kind} KEY-----\n{body}\n-----END {kind} KEY-----",
                  st.sampled_from(["RSA PRIVATE", "PUBLIC", "EC PUBLIC", "ENCRYPTED PRIVATE"]),
                  st.text(string.ascii_letters + string.digits + "+/=", min_size=1, max_size=30)),
        st.builds(lambda user, pw, host: f"https://{user}:{pw}@{host}/path", chars(string.ascii_lowercase + string.digits, 1, 8),
                  chars(ALNUM + "%_.-", 1, 12), st.sampled_from(["db", "db.example", "localhost:5432"])),
        st.builds(lambda tok, word: f"{word} {tok}", chars(ALNUM + "._~+/-", 1, 20),
                  st.sampled_from(["Bearer", "bearer", "BEARER", "Authorization: Bearer"])),
        st.builds(lambda u, d: f"{u}@{d}.example", chars(string.ascii_lowercase + string.digits + ".", 1, 8),
                  chars(string.ascii_lowercase, 1, 8)),
        st.builds(lambda k, v, sep: f"{k}{sep}{v}", st.sampled_from(["token", "api_token", "x-token", "TOKEN"]),
                  chars(string.ascii_lowercase + string.digits, 1, 8), st.sampled_from(["=", ":", ": "])),
        st.builds(lambda ip: ip, st.sampled_from(["198.51.100.23", "10.0.0.1", "2001:db8::1", "::1", "fe80::1%eth0"])),
        st.sampled_from(["\u0664\u0661\u0661\u0661 1111 1111 1111 1111", "ſecret=1", "paſsword", "١٢٣-٤٥-٦٧٨٩"]),
        digits,
    )
    return secret


def leaves() -> st.SearchStrategy[Any]:
    return st.one_of(values_with_secrets(), st.integers(-10**18, 10**18), st.floats(allow_nan=False, allow_infinity=False),
                     st.booleans(), st.none())


def trees() -> st.SearchStrategy[Any]:
    keys = st.one_of(st.sampled_from(SECRET_KEYS), st.sampled_from(PLAIN_KEYS),
                     st.text(string.ascii_letters + "_-.", max_size=12))
    return st.recursive(
        leaves(),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(keys, inner, max_size=3),
            st.builds(json.dumps, st.dictionaries(keys, inner, max_size=3)),  # JSON in a string
        ),
        max_leaves=6,
    )


def headers() -> st.SearchStrategy[Any]:
    """Request headers as SDKs send them: a dict, or [name, value] pairs."""
    names = st.sampled_from(["Authorization", "Cookie", "X-Api-Key", "X-Forwarded-For", "User-Agent", "Accept",
                             "X-Token", "Proxy-Authorization", "X-Request-Id"])
    pairs = st.lists(st.tuples(names, values_with_secrets()).map(list), max_size=5)
    return st.one_of(st.dictionaries(names, values_with_secrets(), max_size=5), pairs)


def mapping(values: st.SearchStrategy[Any], size: int = 4) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(SECRET_KEYS + PLAIN_KEYS), values, max_size=size)


def optional(required: dict[str, Any], **more: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({k: v if isinstance(v, st.SearchStrategy) else st.just(v) for k, v in required.items()},
                                 optional=more)


def events() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(item type, payload): events, transactions, logs, sessions, user and client reports, with
    secrets in request data, headers (dict or pairs), URLs, cookies, frame variables, breadcrumbs,
    spans, contexts, tags, log bodies, attributes and fields, and JSON strings."""
    tree, text = trees(), values_with_secrets()
    frame = optional({"function": "pay", "filename": st.sampled_from(["app.py", "/home/bob/app.py"]),
                      "lineno": st.integers(1, 999)}, vars=mapping(tree))
    exception = optional({"type": "ValueError", "value": text,
                          "stacktrace": st.fixed_dictionaries({"frames": st.lists(frame, max_size=3)})})
    request = optional({}, url=text, headers=headers(), data=tree, query_string=text,
                       cookies=st.one_of(text, st.dictionaries(st.sampled_from(["sessionid", "theme", "csrf"]), text)))
    event = optional(
        {"event_id": "a" * 32, "platform": st.sampled_from(["python", "javascript", "go"])},
        message=text, logentry=st.fixed_dictionaries({"formatted": text}), extra=mapping(tree, 5),
        contexts=st.dictionaries(st.sampled_from(["app", "payment", "trace", "device"]), mapping(tree, 3), max_size=2),
        tags=mapping(text, 3), request=request,
        user=optional({}, id=text, ip_address=st.sampled_from(["198.51.100.23", "{{auto}}"]), data=tree),
        exception=st.fixed_dictionaries({"values": st.lists(exception, max_size=2)}),
        breadcrumbs=st.fixed_dictionaries({"values": st.lists(optional({"message": text}, data=tree), max_size=3)}),
    )
    span = optional({"op": "db", "description": text, "data": tree})
    transaction = optional({"type": "transaction", "transaction": text, "spans": st.lists(span, max_size=3)})
    attribute = st.one_of(st.builds(lambda v: {"type": "string", "value": v}, text), text)
    line = optional({"body": text, "level": "info"}, attributes=mapping(attribute), extra=tree, trace_id=st.just("b" * 32))
    log = st.fixed_dictionaries({"items": st.lists(line, max_size=3)})
    session = optional({"sid": "s", "status": "ok"}, did=text, attrs=tree)
    report = optional({"name": text, "email": text, "comments": text})
    return st.one_of(st.tuples(st.just("event"), event), st.tuples(st.just("transaction"), transaction),
                     st.tuples(st.just("log"), log), st.tuples(st.just("session"), session),
                     st.tuples(st.just("user_report"), report),
                     st.tuples(st.just("client_report"), tree.map(lambda t: {"data": t})))


# 3,400 items under each of the three settings: 10,200 in all, the same ones on every run; four to an
# example (Hypothesis' own work per example cost as much as making and checking the items).
ITEMS_PER_EXAMPLE = 4


@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@pytest.mark.parametrize("scrubbing", SETTINGS, ids=["defaults", "ip-addresses", "fields"])
@settings(max_examples=3400 // ITEMS_PER_EXAMPLE, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(items=st.lists(st.tuples(events(), st.sampled_from([(",", ":"), (", ", ": ")]), st.booleans(), st.booleans()),
                      min_size=ITEMS_PER_EXAMPLE, max_size=ITEMS_PER_EXAMPLE))
def test_generated_items_are_kept_as_relay_keeps_them(
        scrubbing: ScrubbingSettings, items: list[tuple[tuple[str, dict[str, Any]], tuple[str, str], bool, bool]]) -> None:
    for (item_type, payload), separators, ascii_only, escape_slashes in items:
        raw = json.dumps(payload, separators=separators, ensure_ascii=ascii_only)
        if escape_slashes:  # as PHP's json_encode writes slashes
            raw = raw.replace("/", "\\/")
        check(item_type, raw.encode(), scrubbing)


def test_an_empty_value_relay_replaces_is_kept_as_sent_by_both_paths() -> None:
    """Found by the generated items once (the search reached it in one test order only): Relay gives a
    context's `"type": {}` the context's key; the prefilter's path keeps the item as sent, and so must
    Relay's, since an empty value holds nothing to scrub."""
    raw = json.dumps({"event_id": "a" * 32, "platform": "go", "contexts": {"app": {"KEY": [], "type": {}}}}).encode()
    for scrubbing in SETTINGS:
        assert check("event", raw, scrubbing)
        assert scrub_item("event", json.loads(raw), scrubbing)["contexts"]["app"]["type"] == {}


CLEAN_KEYS = ["user", "note", "amount", "route", "colour", "name", "city", "ref", "kind", "step"]
CLEAN_TEXT = st.text(string.ascii_lowercase + " ", max_size=12)


def in_place(where: str, key: str, value: str, filler: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """An item holding `key: value` at `where`, and otherwise only `filler`, which holds nothing to scrub."""
    pair = {**filler, key: value}
    places: dict[str, tuple[str, dict[str, Any]]] = {
        "extra": ("event", {"extra": pair}),
        "request data": ("event", {"request": {"data": pair}}),
        "headers": ("event", {"request": {"headers": pair}}),
        "header pairs": ("event", {"request": {"headers": [[k, v] for k, v in pair.items()]}}),
        "url": ("event", {"request": {"url": f"https://shop.example/{value}"}, "extra": filler}),
        "message": ("event", {"logentry": {"formatted": value}, "extra": filler}),
        "message text": ("event", {"message": value, "extra": filler}),
        "message params": ("event", {"logentry": {"message": "paid %s", "params": [value]}, "extra": filler}),
        "legacy message": ("event", {"sentry.interfaces.Message": {"message": value}, "extra": filler}),
        "transaction message": ("transaction", {"type": "transaction", "logentry": {"formatted": value}}),
        "bodies as extra": ("client_report", {LOG_BODIES: [value], **filler}),
        "frame vars": ("event", {"exception": {"values": [{"type": "E", "stacktrace": {"frames": [{"vars": pair}]}}]}}),
        "breadcrumb": ("event", {"breadcrumbs": {"values": [{"message": "m", "data": pair}]}}),
        "json string": ("event", {"extra": {**filler, "blob": json.dumps({key: value})}}),
        "span": ("transaction", {"type": "transaction", "spans": [{"op": "db", "data": pair}]}),
        "log attribute": ("log", {"items": [{"body": "b", "attributes": {k: {"type": "string", "value": v}
                                                                           for k, v in pair.items()}}]}),
        "log body": ("log", {"items": [{"body": value, "attributes": filler}]}),
        "log field": ("log", {"items": [{"body": "b", "extra": pair}]}),
        "session attrs": ("session", {"sid": "s", "attrs": pair}),
        "user report": ("user_report", {"name": "n", "comments": value, **filler}),
    }
    return places[where]


def planted() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """One secret, by its key or its value, in an item that holds nothing else to scrub: any word or
    pattern the prefilter did not look for would let such an item through unread."""
    pair = st.one_of(st.tuples(st.sampled_from(SECRET_KEYS), CLEAN_TEXT), st.tuples(st.sampled_from(CLEAN_KEYS), secrets()))
    filler = st.dictionaries(st.sampled_from(CLEAN_KEYS), CLEAN_TEXT, max_size=3)
    return st.builds(lambda where, kv, rest: in_place(where, kv[0], kv[1], rest),
                     st.sampled_from(["extra", "request data", "headers", "header pairs", "url", "message", "message text",
                                      "message params", "legacy message", "transaction message", "bodies as extra", "frame vars",
                                      "breadcrumb", "json string", "span", "log attribute", "log body", "log field",
                                      "session attrs", "user report"]), pair, filler)


@pytest.mark.parametrize("scrubbing", SETTINGS, ids=["defaults", "ip-addresses", "fields"])
@settings(max_examples=700, derandomize=True, database=None, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(item=planted())
def test_one_secret_in_an_item_otherwise_clean_is_read_by_relay(scrubbing: ScrubbingSettings,
                                                                 item: tuple[str, dict[str, Any]]) -> None:
    item_type, payload = item
    check(item_type, json.dumps(payload).encode(), scrubbing)


def test_a_planted_secret_of_each_kind_does_not_survive() -> None:
    secrets = {"password": "pw-planted-1", "api_key": "key-planted-2", "note": "4111 1111 1111 1111",
               "iban": "DE89370400440532013000", "ssn": "123-45-6789",
               "pem": "-----BEGIN PRIVATE KEY-----\nplantedpem3\n-----END PRIVATE KEY-----",
               "url": "https://bob:url-planted-4@db.example/x", "auth": "Bearer bearer-planted-5"}
    event = {"extra": {"nested": [json.dumps({"password": "json-planted-6"})], **secrets},
             "request": {"headers": [["Authorization", "Bearer hdr-planted-7"]], "url": "https://a:url-planted-8@h/p?token=q-planted-9"}}
    raw = json.dumps(event).encode()
    assert not holds_nothing_to_scrub(raw, DEFAULTS)
    check("event", raw, DEFAULTS, ("pw-planted-1", "key-planted-2", "4111 1111 1111 1111", "DE89370400440532013000",
                                   "123-45-6789", "plantedpem3", "url-planted-4", "bearer-planted-5", "json-planted-6",
                                   "hdr-planted-7", "url-planted-8", "q-planted-9"))
