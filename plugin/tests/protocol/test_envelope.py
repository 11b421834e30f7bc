import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from plugin_support.envelopes import SAMPLE_PATHS, SAMPLES, assemble, header_line
from reflex_lookout.protocol.envelope import CAPPED_ITEM_TYPES, Envelope, EnvelopeError, parse

DSN = "https://k@o1.example.com/1"
LIMIT = 1024 * 1024


def parse_ok(body: bytes, max_item_bytes: int = LIMIT) -> Envelope:
    return parse(body, max_item_bytes)


def refusal(body: bytes, max_item_bytes: int = LIMIT) -> EnvelopeError:
    with pytest.raises(EnvelopeError) as caught:
        parse(body, max_item_bytes)
    return caught.value


# Real events -------------------------------------------------------------------------------------


def envelope_headers(event: dict[str, object]) -> dict[str, object]:
    event_id = event.get("event_id")
    return {"event_id": event_id, "dsn": DSN} if isinstance(event_id, str) else {"dsn": DSN}


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=[str(p.relative_to(SAMPLES)) for p in SAMPLE_PATHS])
def test_real_events_with_length_keep_their_exact_bytes(path: Path) -> None:
    raw = path.read_bytes()
    event = json.loads(raw)
    envelope = parse_ok(assemble(envelope_headers(event), [({"type": "event", "length": len(raw)}, raw)]))
    assert envelope.dsn == DSN
    assert envelope.event_id == event.get("event_id")
    [item] = envelope.items
    assert (item.type, item.headers, item.payload) == ("event", {"type": "event", "length": len(raw)}, raw)


@pytest.mark.parametrize("path", SAMPLE_PATHS, ids=[str(p.relative_to(SAMPLES)) for p in SAMPLE_PATHS])
def test_real_events_without_length_keep_their_exact_bytes(path: Path) -> None:
    event = json.loads(path.read_bytes())
    line = header_line(event)  # without `length` the payload must be one line
    assert b"\n" not in line
    envelope = parse_ok(assemble(envelope_headers(event), [({"type": "event"}, line)]))
    [item] = envelope.items
    assert (item.type, item.payload) == ("event", line)
    assert json.loads(item.payload) == event


def test_the_samples_are_there() -> None:
    assert len(SAMPLE_PATHS) == 190


# Layout ------------------------------------------------------------------------------------------

BINARY = b"\x00\n\xff\r\n{\"type\":\"event\"}\n\n\xfe"


def test_binary_payload_with_length_is_kept_exactly() -> None:
    body = assemble(
        {"event_id": "9ec79c33ec9942ab8353589fcb2e04dc"},
        [
            ({"type": "attachment", "length": len(BINARY), "filename": "a.bin"}, BINARY),
            ({"type": "event", "length": 2}, b"{}"),
        ],
    )
    envelope = parse_ok(body)
    assert [(i.type, i.payload) for i in envelope.items] == [("attachment", BINARY), ("event", b"{}")]
    assert envelope.items[0].headers["filename"] == "a.bin"
    assert envelope.event_id == "9ec79c33ec9942ab8353589fcb2e04dc"
    assert envelope.dsn is None


def test_relays_multiple_items_example() -> None:
    body = (
        b'{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc",'
        b'"dsn":"https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42"}\n'
        b'{"type":"attachment","length":10,"content_type":"text/plain","filename":"hello.txt"}\n'
        b"\xef\xbb\xbfHello\r\n\n"
        b'{"type":"event","length":41,"content_type":"application/json","filename":"application.log"}\n'
        b'{"message":"hello world","level":"error"}\n'
    )
    envelope = parse_ok(body)
    assert envelope.dsn == "https://e12d836b15bb49d7bbf99e64295d995b:@sentry.io/42"
    assert [i.payload for i in envelope.items] == [
        b"\xef\xbb\xbfHello\r\n",
        b'{"message":"hello world","level":"error"}',
    ]


def test_payload_without_length_runs_to_the_end_of_its_line() -> None:
    envelope = parse_ok(b'{}\n{"type":"attachment"}\nhello world\n{"type":"session"}\n{"x":1}\n')
    assert [(i.type, i.payload) for i in envelope.items] == [
        ("attachment", b"hello world"),
        ("session", b'{"x":1}'),
    ]


@pytest.mark.parametrize(
    ("body", "payloads"),
    [
        (b"{}", []),
        (b"{}\n", []),
        (b'{}\n{"type":"attachment","length":5}\nhello', [b"hello"]),
        (b'{}\n{"type":"attachment"}\nhello', [b"hello"]),
        (b'{}\n{"type":"attachment"}', [b""]),
        (b'{}\n{"type":"attachment","length":0}', [b""]),
        (b'{}\n{"type":"attachment","length":0}\n\n{"type":"attachment","length":0}\n', [b"", b""]),
    ],
    ids=["header-only", "header-newline", "sized-at-eof", "unsized-at-eof", "unsized-empty-eof",
         "sized-empty-eof", "relay-empty-items"],
)
def test_the_last_newline_is_optional(body: bytes, payloads: list[bytes]) -> None:
    assert [i.payload for i in parse_ok(body).items] == payloads


def test_blank_lines_between_items_before_the_header_and_at_the_end_are_skipped() -> None:
    body = (
        b'\n\n{"dsn":"%s"}\n\n\r\n  \n' % DSN.encode()
        + b'{"type":"event","length":2}\n{}\n\n\n'
        + b'{"type":"event"}\n{}\n\n\n'
    )
    envelope = parse_ok(body)
    assert envelope.dsn == DSN
    assert [i.payload for i in envelope.items] == [b"{}", b"{}"]


def test_an_empty_line_right_after_an_unsized_header_is_its_empty_payload() -> None:
    envelope = parse_ok(b'{}\n{"type":"attachment"}\n\n{"type":"event"}\n{}\n')
    assert [(i.type, i.payload) for i in envelope.items] == [("attachment", b""), ("event", b"{}")]


def test_crlf_header_lines_are_accepted_and_payload_bytes_are_kept() -> None:
    body = (
        b'{"dsn":"' + DSN.encode() + b'"}\r\n'
        b'{"type":"attachment","length":4}\r\n'
        b"a\r\nb\r\n"  # a sized payload may be followed by \r\n
        b'{"type":"event"}\r\n'
        b"{}\r\n"  # an unsized payload keeps its \r, as in Relay
    )
    envelope = parse_ok(body)
    assert envelope.dsn == DSN
    assert [(i.type, i.payload) for i in envelope.items] == [("attachment", b"a\r\nb"), ("event", b"{}\r")]


def test_length_null_means_no_length_and_dsn_null_means_no_dsn() -> None:
    envelope = parse_ok(b'{"dsn":null}\n{"type":"event","length":null}\n{}\n')
    assert envelope.dsn is None
    assert envelope.items[0].payload == b"{}"


def test_non_string_event_id_is_not_reported() -> None:
    assert parse_ok(b'{"event_id":42}').event_id is None


def test_unknown_item_types_and_extra_headers_are_kept() -> None:
    envelope = parse_ok(
        b'{"sent_at":"2024-01-01T00:00:00Z","sdk":{"name":"x"}}\n{"type":"new_thing","x":[1,2]}\nabc\n'
    )
    assert envelope.headers == {"sent_at": "2024-01-01T00:00:00Z", "sdk": {"name": "x"}}
    assert envelope.items[0].headers == {"type": "new_thing", "x": [1, 2]}


# Malformed envelopes -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "complaint"),
    [
        (b"", "The envelope is empty."),
        (b"\n \r\n\t", "The envelope is empty."),
        (b"{", "The envelope header is not valid JSON"),
        (b"[]\n", "The envelope header is not a JSON object."),
        (b'"dsn"\n', "The envelope header is not a JSON object."),
        (b"\xff{}\n", "The envelope header is not valid UTF-8."),
        (b"\xef\xbb\xbf{}\n", "The envelope header is not valid JSON"),
        (b'{"dsn":1}\n', "dsn must be a string"),
        (b'{"dsn":["x"]}\n', "dsn must be a string"),
        (b'{"dsn":"\\ud800"}\n', "dsn must be a string"),
        (b'{"x":NaN}\n', "not valid JSON (NaN is not a JSON value)"),
        (b'{"x":-Infinity}\n', "not valid JSON"),
        (b'{"x":' + b"1" * 5000 + b"}\n", "not valid JSON"),
        (b'{}\n{"type":"event"\n{}\n', "The header of item 1 is not valid JSON"),
        (b'{}\n{"type":"event","length":2}\n{}\nnot json\n', "The header of item 2 is not valid JSON"),
        (b"{}\n[]\n", "The header of item 1 is not a JSON object."),
        (b'{}\n"event"\n', "The header of item 1 is not a JSON object."),
        (b'{}\n{"length":2}\n{}\n', "The header of item 1 has no string type."),
        (b'{}\n{"type":5}\n{}\n', "The header of item 1 has no string type."),
        (b'{}\n{"type":null}\n{}\n', "The header of item 1 has no string type."),
        (b'{}\n{"type":"\\udc00"}\n{}\n', "The header of item 1 has no string type."),
        (b'{}\n{"type":"event","length":true}\n{}\n', "must be a non-negative integer, not True"),
        (b'{}\n{"type":"event","length":false}\n\n', "must be a non-negative integer, not False"),
        (b'{}\n{"type":"event","length":-1}\n{}\n', "must be a non-negative integer, not -1"),
        (b'{}\n{"type":"event","length":2.0}\n{}\n', "must be a non-negative integer, not 2.0"),
        (b'{}\n{"type":"event","length":"2"}\n{}\n', "must be a non-negative integer, not '2'"),
        (b'{}\n{"type":"event","length":3}\n{}', "declares 3 payload bytes but only 2 remain"),
        (b'{}\n{"type":"event","length":1}', "declares 1 payload bytes but only 0 remain"),
        (b'{}\n{"type":"event","length":99999999999999999999}\n{}\n', "only 3 remain"),
        (b'{}\n{"type":"event","length":1}\n{}\n', "The payload of item 1 is not followed by a line break."),
        (b'{}\n{"type":"event","length":2}\n{}\r', "The payload of item 1 is not followed by a line break."),
        (b'{}\n{"type":"event","length":2}\n{} \n', "The payload of item 1 is not followed by a line break."),
    ],
)
def test_malformed_envelopes_are_400_with_a_sentence(body: bytes, complaint: str) -> None:
    error = refusal(body)
    assert error.status == 400
    assert complaint in error.message
    assert str(error) == error.message
    assert error.message.endswith(".")


def test_a_truncated_envelope_is_400() -> None:
    body = assemble({"dsn": DSN}, [({"type": "attachment", "length": len(BINARY)}, BINARY)])
    for cut in range(len(body) - len(BINARY) - 1, len(body) - 1):
        assert refusal(body[:cut]).status == 400


@pytest.mark.parametrize("where", ["envelope", "item"])
@pytest.mark.parametrize("opening", [b"[", b'{"a":'])
def test_deeply_nested_headers_are_400(where: str, opening: bytes) -> None:
    nested = b'{"x":' + opening * 100_000 + b"\n"
    body = nested if where == "envelope" else b"{}\n" + nested
    error = refusal(body)
    assert error.status == 400
    assert "nested too deeply" in error.message or "not valid JSON" in error.message


def test_moderately_nested_headers_are_fine() -> None:
    nested = b"[" * 50 + b"]" * 50
    assert parse_ok(b'{"x":' + nested + b"}").headers == {"x": json.loads(nested)}


# Size caps ---------------------------------------------------------------------------------------


def test_capped_item_types_follow_relays_small_per_item_limits() -> None:
    assert {"event", "transaction", "log", "span", "check_in", "security", "feedback"} <= CAPPED_ITEM_TYPES
    assert not {"attachment", "replay_recording", "replay_video", "profile", "session"} & CAPPED_ITEM_TYPES


@pytest.mark.parametrize("item_type", sorted(CAPPED_ITEM_TYPES))
@pytest.mark.parametrize("sized", [True, False], ids=["length", "no-length"])
def test_an_oversize_capped_item_is_413_naming_its_type_and_the_limit(item_type: str, sized: bool) -> None:
    payload = b"x" * 101
    item_headers: dict[str, object] = {"type": item_type, **({"length": 101} if sized else {})}
    error = refusal(assemble({}, [({"type": "attachment"}, b"a"), (item_headers, payload)]), 100)
    assert error.status == 413
    assert f"Item 2 of type {item_type!r} is 101 bytes" in error.message
    assert "100-byte limit" in error.message
    assert [i.payload for i in parse_ok(assemble({}, [(item_headers, payload)]), 101).items] == [payload]


def test_oversize_uncapped_items_are_fine() -> None:
    big = bytes(range(256)) * 40
    body = assemble(
        {}, [({"type": "attachment", "length": len(big)}, big), ({"type": "replay_recording"}, b"r" * 500)]
    )
    assert [i.payload for i in parse_ok(body, 100).items] == [big, b"r" * 500]


def test_batched_logs_are_capped_per_record() -> None:
    payload = b"x" * 1000
    batch = assemble({}, [({"type": "log", "length": 1000, "item_count": 10}, payload)])
    assert parse_ok(batch, 100).items[0].payload == payload
    error = refusal(assemble({}, [({"type": "log", "length": 1000, "item_count": 9}, payload)]), 100)
    assert (error.status, "averages 111 bytes per record" in error.message) == (413, True)
    # item_count only counts for container types, and a bool is not a count.
    for item_headers in ({"type": "event", "item_count": 10}, {"type": "log", "item_count": True}):
        assert refusal(assemble({}, [({**item_headers, "length": 1000}, payload)]), 100).status == 413


def test_structure_errors_come_before_size_errors() -> None:
    assert refusal(b'{}\n{"type":"event","length":500}\n' + b"x" * 10, 100).status == 400


# Properties --------------------------------------------------------------------------------------

ItemSpec = tuple[dict[str, object], bytes]

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
json_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
json_leaves = json_scalars | json_text
json_values = (
    json_leaves | st.lists(json_leaves, max_size=3) | st.dictionaries(json_text, json_leaves, max_size=3)
)
extra_headers = st.dictionaries(
    json_text.filter(lambda key: key not in {"type", "length", "dsn", "item_count"}), json_values, max_size=3
)
item_types = st.sampled_from(["event", "attachment", "transaction", "session", "log", "span"]) | json_text


@st.composite
def items(draw: st.DrawFn) -> ItemSpec:
    headers: dict[str, object] = {**draw(extra_headers), "type": draw(item_types)}
    if draw(st.booleans()):
        payload = draw(st.binary(max_size=300))
        headers["length"] = len(payload)
    else:
        payload = draw(st.binary(max_size=300).map(lambda b: b.replace(b"\n", b"")))
    return headers, payload


@st.composite
def envelopes(draw: st.DrawFn) -> tuple[bytes, dict[str, object], list[ItemSpec]]:
    """A valid envelope in any layout the parser accepts, with what it must parse to."""
    headers: dict[str, object] = draw(extra_headers)
    if draw(st.booleans()):
        headers["dsn"] = draw(st.sampled_from([DSN, "https://other@example.org/2", ""]))
    specs = draw(st.lists(items(), max_size=4))
    newline = st.sampled_from([b"\n", b"\r\n"])
    blank = st.sampled_from([b"", b"", b"\n", b"\n\n", b"\r\n \t\n"])
    parts = [draw(blank), header_line(headers)]
    for item_headers, payload in specs:
        parts += [draw(newline), draw(blank), header_line(item_headers), draw(newline), payload]
        parts.append(draw(newline) if "length" in item_headers else b"\n")
    if specs and "length" not in specs[-1][0] and draw(st.booleans()):
        parts.pop()  # the last payload may end the body, with nothing after it
    else:
        parts.append(draw(blank))
    return b"".join(parts), headers, specs


def assert_parses_or_refuses(body: bytes) -> None:
    try:
        envelope = parse(body, 200)
    except EnvelopeError as exc:
        assert exc.status in {400, 413}
        assert isinstance(exc.message, str) and exc.message
    else:
        assert isinstance(envelope, Envelope)
        assert all(isinstance(item.payload, bytes) and isinstance(item.type, str) for item in envelope.items)


@settings(max_examples=700, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_parse_or_raise_envelope_error(body: bytes) -> None:
    assert_parses_or_refuses(body)


FRAGMENTS = [
    b"{}", b"[]", b"{", b"}", b'"', b"\n", b"\r\n", b"\r", b" ", b"\x00", b"\xff", b"\xc3", b"\\u0000",
    b'{"type":"event"}', b'{"type":"attachment","length":3}', b'{"type":"log","length":0}',
    b'{"type":"event","length":-1}', b'{"type":true}', b'{"dsn":1}', b'{"dsn":"x","event_id":"y"}',
    b'{"type":"event","length":1e3}', b'{"length":1}', b"NaN", b"abc", b"[" * 3000, b"x" * 250,
]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map(b"".join))
def test_header_like_soup_parses_or_raises_envelope_error(body: bytes) -> None:
    assert_parses_or_refuses(body)


SAMPLE_ENVELOPES = [
    assemble(envelope_headers(json.loads(raw)), [({"type": "event", "length": len(raw)}, raw)])
    for raw in (path.read_bytes() for path in SAMPLE_PATHS[:40:4])
]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    source = st.sampled_from(SAMPLE_ENVELOPES) if SAMPLE_ENVELOPES else st.nothing()
    body = bytearray(draw(envelopes().map(lambda generated: generated[0]) | source))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(body)))
        action = draw(st.sampled_from(["flip", "insert", "delete", "truncate"]))
        if action == "flip" and at < len(body):
            body[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "insert":
            inserted = st.sampled_from([b"\n", b"\r", b"{", b'"', b"\x00", b"9"]) | st.binary(max_size=4)
            body[at:at] = draw(inserted)
        elif action == "delete":
            del body[at : at + draw(st.integers(1, 8))]
        else:
            del body[at:]
    return bytes(body)


@settings(max_examples=700, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_envelopes_parse_or_raise_envelope_error(body: bytes) -> None:
    assert_parses_or_refuses(body)


@settings(max_examples=500, deadline=None)
@given(envelopes())
def test_generated_envelopes_round_trip(generated: tuple[bytes, dict[str, object], list[ItemSpec]]) -> None:
    body, headers, specs = generated
    envelope = parse(body, LIMIT)
    assert envelope.headers == headers
    assert envelope.dsn == headers.get("dsn")
    assert [(i.type, i.headers, i.payload) for i in envelope.items] == [
        (item_headers["type"], item_headers, payload) for item_headers, payload in specs
    ]


# Issue 13: bounded work for any envelope -----------------------------------------------------------


def test_an_envelope_holds_at_most_max_items_items() -> None:
    from reflex_lookout.protocol.envelope import MAX_ITEMS

    assert MAX_ITEMS == 1000
    assert len(parse_ok(assemble({}, [({"type": "a"}, b"")] * 1000)).items) == 1000
    error = refusal(assemble({}, [({"type": "a"}, b"")] * 1001 + [({"type": "a"}, b"")] * 5000))
    assert error.status == 413 and "more than 1000 items; the limit is 1000 items." in error.message
    assert parse(assemble({}, [({"type": "a"}, b"")] * 3), LIMIT, max_items=3).items  # the cap is a parameter
    assert refusal(assemble({}, [({"type": "a"}, b"not json")] * 1001)).status == 413  # counted before parsing


def test_a_container_says_at_most_max_records_and_is_at_most_max_container_bytes() -> None:
    from reflex_lookout.protocol.envelope import MAX_CONTAINER_BYTES, MAX_RECORDS

    too_many = refusal(assemble({}, [({"type": "log", "item_count": MAX_RECORDS + 1}, b"{}")]))
    assert too_many.status == 413 and f"the limit is {MAX_RECORDS} records" in too_many.message
    big = b" " * (MAX_CONTAINER_BYTES + 1)
    too_big = refusal(assemble({}, [({"type": "span", "item_count": MAX_RECORDS, "length": len(big)}, big)]))
    assert too_big.status == 413 and f"{MAX_CONTAINER_BYTES}-byte limit for a batch" in too_big.message


def test_the_header_is_read_from_the_start_of_a_body() -> None:
    from reflex_lookout.protocol.envelope import header_line_ended, read_header

    body = b'\n\n{"dsn":"' + DSN.encode() + b'","event_id":"x"}\n{"type":"event"}\n{}'
    assert header_line_ended(body[:40]) is False and header_line_ended(body) is True
    assert read_header(body)["dsn"] == DSN
    assert read_header(b'{"dsn":null}')["dsn"] is None  # a header without items, without its newline
    for start, complaint in [
        (b"", "The envelope is empty."),
        (b"  \n ", "The envelope is empty."),
        (b'{"dsn": 5}\n', "dsn must be a string"),
        (b"[]\n", "not a JSON object"),
        (b'{"dsn":"' + b"x" * 100, "does not end within the body's first 100 bytes"),
    ]:
        with pytest.raises(EnvelopeError) as caught:
            read_header(start[:100], max_bytes=100)
        assert caught.value.status == 400 and complaint in caught.value.message, start
