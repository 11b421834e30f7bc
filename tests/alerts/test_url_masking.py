"""app/alerts/url_masking.py: a webhook's URL, whole or in parts, masked in a text that quotes it."""

from __future__ import annotations

import pytest

from app.alerts.url_masking import unquoted

SLACK = "https://hooks.slack.com/services/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"


@pytest.mark.parametrize("text, shown", [
    (f"could not post to {SLACK}", "could not post to …"),
    ("Cannot POST /services/T0AB12CD3/B0EF45GH6/q1w2e3r4t5y6u7i8o9p0asdf", "Cannot POST …"),
    ("invalid_token: q1w2e3r4t5y6u7i8o9p0asdf", "invalid_token: …"),  # a part alone
    ("team T0AB12CD3 has no channel B0EF45GH6", "team … has no channel …"),  # ids: 8+ characters with a digit
    ("no_service: services are down", "no_service: services are down"),  # a word of the path is not a secret
    ("", ""),
])
def test_a_slack_url_is_masked_whole_and_in_parts(text: str, shown: str) -> None:
    assert unquoted(text, SLACK) == shown


def test_the_query_the_fragment_and_a_decoded_echo_are_masked() -> None:
    url = "https://hooks.example.com/in/a%20b?token=tok3n-0f-the-hook&x=1#sig=abcdefabcdefabcdef"
    text = "POST /in/a b?token=tok3n-0f-the-hook&x=1 failed; token tok3n-0f-the-hook, sig=abcdefabcdefabcdef, x=1"
    assert unquoted(text, url) == "POST … failed; token …, …, x=1"
    assert unquoted("no route /in/a%20b", url) == "no route …"  # the path without its query


def test_a_url_that_cannot_be_split_is_masked_whole() -> None:
    assert unquoted("bad http://[::1 here", "http://[::1") == "bad … here"
