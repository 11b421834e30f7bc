"""JSON from outside, read strictly: depth bounded before parsing, no NaN or infinities."""

from __future__ import annotations

import json

import pytest

from reflex_lookout.protocol.payloads import MAX_DEPTH, UnreadablePayload, depth, load_object, loads

MIB = 1024 * 1024


@pytest.mark.parametrize("document", [
    {"a": [1, {"b": "]]]}}}"}]},  # brackets in strings do not count
    ["\\", '"', "\\\"[", {"k\"[": ["x"]}],  # nor escaped quotes and backslashes around them
    [],
    "text",
])
def test_depth_is_exact_for_json(document: object) -> None:
    def nesting(value: object) -> int:
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        return 0 if children is None else 1 + max(map(nesting, children), default=0)

    assert depth(json.dumps(document).encode()) == nesting(document)


def test_nesting_up_to_the_limit_is_read_and_past_it_refused() -> None:
    assert loads(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None
    with pytest.raises(UnreadablePayload, match="nested more than 128 levels"):
        loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


@pytest.mark.parametrize("data", [
    b"[" * 200_000 + b"]" * 200_000,  # deep: refused before the decoder recurses
    b'{"e":' * 100_000 + b"1" + b"}" * 100_000,
    b'"' + b'\\"' * (MIB // 2),  # an unclosed string of escaped quotes: scanned once, not from each quote
    b'["' + b"\\\\" * (MIB // 2) + b'"',
    b"[" * MIB,
])
def test_hostile_documents_of_a_mebibyte_are_refused(data: bytes) -> None:
    with pytest.raises(UnreadablePayload):
        loads(data)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999", "-1e400"])
def test_numbers_json_has_not_are_refused(number: str) -> None:
    with pytest.raises(UnreadablePayload, match="not valid JSON"):
        loads(f'{{"timestamp": {number}}}')


def test_a_document_reads_as_json_does() -> None:
    text = '{"a": [1, 2.5e3, -0.0, true, null, "\\u00e9\\ud83d\\ude00"], "b": {"c": 1e308}}'
    assert loads(text) == loads(text.encode()) == json.loads(text)
    assert load_object(text.encode("utf-8-sig")) == json.loads(text)  # as json.loads, a BOM is allowed in bytes
    with pytest.raises(UnreadablePayload, match="not a JSON object"):
        load_object(b"[1]")
    with pytest.raises(UnreadablePayload, match="not valid JSON"):
        loads(b"\xff\xfe{")
