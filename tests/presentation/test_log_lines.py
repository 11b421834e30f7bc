"""A log line's row: its attributes as text, and links to its trace and to an error of that trace."""

from __future__ import annotations

from app.presentation.log_lines import attributes_text, log_fields

LINE = {"timestamp": 5.0, "level": "warn", "body": "<b>declined</b>", "trace_id": "AB" * 16,
        "attributes": '{"route": {"value": "/checkout", "type": "string"}, "attempt": 2}'}


def test_a_line_of_a_trace_links_to_the_trace_and_to_its_error() -> None:
    row = log_fields(LINE, "5 s ago", 7)
    assert row == {"when": "5 s ago", "level": "warn", "body": "<b>declined</b>", "attributes": "attempt=2 route=/checkout",
                   "trace": "/trace?id=" + "ab" * 16, "issue": "/issue?id=7"}


def test_a_line_without_a_trace_or_an_error_links_nowhere() -> None:
    row = log_fields({**LINE, "trace_id": ""}, "now")
    assert (row["trace"], row["issue"]) == ("", "")
    assert log_fields(LINE, "now")["issue"] == ""


def test_attributes_that_are_not_an_object_read_as_none() -> None:
    assert attributes_text("[1, 2]") == attributes_text("{") == ""
