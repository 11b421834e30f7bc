"""Container items (logs, spans, trace metrics): every record is held to the per-item cap, and a
container to MAX_RECORDS records, whatever its `item_count` header says."""

from __future__ import annotations

import json

import pytest

from plugin_support.envelopes import assemble
from reflex_lookout.protocol import containers
from reflex_lookout.protocol.envelope import MAX_RECORDS, EnvelopeError, parse

LIMIT = 1000
LOG_TYPE = "application/vnd.sentry.items.log+json"


def container(payload: bytes, item_type: str = "log", **headers: object) -> bytes:
    return assemble({}, [({"type": "attachment"}, b"a"), ({"type": item_type, "length": len(payload), **headers}, payload)])


def check(body: bytes, limit: int = LIMIT) -> None:
    containers.check(parse(body, 10**9), limit)


def refusal(body: bytes, limit: int = LIMIT) -> EnvelopeError:
    with pytest.raises(EnvelopeError) as caught:
        check(body, limit)
    return caught.value


def records(*sizes: int) -> bytes:
    return json.dumps({"items": [{"body": "x" * size} for size in sizes]}).encode()


def test_records_within_the_caps_pass_whatever_the_layout() -> None:
    check(container(records(10, 900), item_count=2))
    check(container(b' { "version" : 2 , "items" : [ {"a": [1, {"b": null}]} , "text" ] , "x": {} } ', item_count=2))
    check(container(b'{"items": []}'))
    check(container(b'{}', content_type=LOG_TYPE))
    check(container(records(*[1] * MAX_RECORDS), "trace_metric"))


def test_a_record_over_the_cap_is_413_naming_it_even_in_a_batch_that_claims_many() -> None:
    error = refusal(container(records(10, 5000, 10), item_count=1000))
    assert error.status == 413
    assert error.message == "Record 2 of item 2 (type 'log') is 5012 bytes, over the 1000-byte limit for that type."


def test_a_record_is_measured_in_bytes_not_characters() -> None:
    assert refusal(container(json.dumps({"items": ["é" * 600]}, ensure_ascii=False).encode())).status == 413
    check(container(json.dumps({"items": ["e" * 600]}).encode()))


def test_more_than_max_records_is_413() -> None:
    error = refusal(container(records(*[1] * (MAX_RECORDS + 1)), "span", item_count=1))
    assert error.status == 413 and f"more than {MAX_RECORDS} records" in error.message


@pytest.mark.parametrize(("payload", "complaint"), [
    (b"[]", "not a batch of records"),
    (b'{"items": {}}', "not a batch of records"),
    (b'{"items": [1,]}', "not a batch of records"),
    (b'{"items": [NaN]}', "NaN is not a JSON value"),
    (b'{"items": [1]} x', "extra data"),
    (b'{1: 2}', "not a batch of records"),
    (b"\xff", "not valid UTF-8"),
    (b'{"items": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}", "Record 1 of item 2 (type 'log') is nested too deeply."),
])
def test_a_payload_that_is_no_batch_of_records_is_400(payload: bytes, complaint: str) -> None:
    error = refusal(container(payload), limit=10**9)
    assert error.status == 400 and complaint in error.message and error.message.endswith("."), error.message


def test_a_legacy_standalone_span_is_no_container() -> None:
    check(container(b'{"span_id": "a", "items": "not a list"}', "span"))
    assert refusal(container(b"[]", "span", item_count=1)).status == 400
    check(container(b"not json at all", "event"))  # other types are not read here
