"""The search grammar, pure: each form of Sentry's issue search syntax as its typed terms, and each
query that does not parse as one sentence naming its term."""

from __future__ import annotations

import pytest

from app.inbox.search.grammar import MAX_LIST_VALUES, MAX_QUERY_CHARS, MAX_TERMS, parse
from app.inbox.search.terms import (
    AssignedTerm,
    CountTerm,
    DateTerm,
    EventIdTerm,
    HasTerm,
    IdTerm,
    IsTerm,
    Query,
    SearchError,
    ShortIdTerm,
    TagTerm,
    TextTerm,
)

MAY_1 = 1714521600.0  # 2024-05-01T00:00:00Z


def terms(text: str) -> tuple:
    return parse(text).terms


def test_an_empty_query_has_no_terms() -> None:
    assert parse("") == parse("   ") == Query(())


@pytest.mark.parametrize(("text", "expected"), [
    ("browser.name:Chrome", TagTerm("browser.name", ("Chrome",))),
    ('user.username:"Jane Doe"', TagTerm("user.username", ("Jane Doe",))),
    ('message:"say \\"hi\\""', TagTerm("message", ('say "hi"',))),
    ("!environment:staging", TagTerm("environment", ("staging",), negated=True)),
    ("release:[1.0, 1.1]", TagTerm("release", ("1.0", "1.1"))),
    ('release:[ 1.0 ,"two words"]', TagTerm("release", ("1.0", "two words"))),
    ("!level:[info, debug]", TagTerm("level", ("info", "debug"), negated=True)),
    ("url:*/checkout*", TagTerm("url", ("*/checkout*",), wildcard=True)),
    ("server_name:[web-1, db-*]", TagTerm("server_name", ("web-1", "db-*"), wildcard=True)),
    ("tags[custom key]:x", None),  # not a tag key: no spaces in keys, even bracketed
    ("tags[feature.flag]:on", TagTerm("feature.flag", ("on",))),
    ("level:error", TagTerm("level", ("error",))),
    ("release:latest", TagTerm("release", ("latest",))),
    ("url:100%_done", TagTerm("url", ("100%_done",))),
    ("url:http://x.example/a:b", TagTerm("url", ("http://x.example/a:b",))),
    ("has:user", HasTerm("user")),
    ("!has:user.email", HasTerm("user.email", negated=True)),
    ('browser:""', HasTerm("browser", negated=True)),
    ('!browser:""', HasTerm("browser")),
    ("is:unresolved", IsTerm("unresolved")),
    ("is:Resolved", IsTerm("resolved")),
    ("!is:ignored", IsTerm("ignored", negated=True)),
    ("is:regressed", IsTerm("regressed")),
    ("is:assigned", IsTerm("assigned")),
    ("is:unassigned", IsTerm("unassigned")),
    ("assigned:me", AssignedTerm(("me",))),
    ("assigned:alice", AssignedTerm(("alice",))),
    ("assigned:none", AssignedTerm(("none",))),
    ("!assigned:[me, none]", AssignedTerm(("me", "none"), negated=True)),
    ("timesSeen:>10", CountTerm(">", 10)),
    ("timesSeen:>=10", CountTerm(">=", 10)),
    ("timesSeen:<3", CountTerm("<", 3)),
    ("timesSeen:<=3", CountTerm("<=", 3)),
    ("timesSeen:=7", CountTerm("=", 7)),
    ("timesSeen:7", CountTerm("=", 7)),
    ("age:-24h", DateTerm("first_seen", ">=", ago=86400.0)),
    ("firstSeen:+30m", DateTerm("first_seen", "<=", ago=1800.0)),
    ("lastSeen:+7d", DateTerm("last_seen", "<=", ago=7 * 86400.0)),
    ("lastSeen:-2w", DateTerm("last_seen", ">=", ago=14 * 86400.0)),
    ("age:-90s", DateTerm("first_seen", ">=", ago=90.0)),
    ("firstSeen:>2024-05-01", DateTerm("first_seen", ">", when=MAY_1)),
    ("firstSeen:<=2024-05-01T12:00:00", DateTerm("first_seen", "<=", when=MAY_1 + 12 * 3600)),
    ("lastSeen:<2024-05-01T12:00:00+02:00", DateTerm("last_seen", "<", when=MAY_1 + 10 * 3600)),
    ("lastSeen:>=2024-05-01T00:00:00Z", DateTerm("last_seen", ">=", when=MAY_1)),
])
def test_a_filter_is_its_typed_term(text: str, expected: object) -> None:
    if expected is None:
        assert terms(text) == (TextTerm("tags[custom key]:x"),)
    else:
        assert terms(text) == (expected,)


def test_a_date_alone_is_that_day_and_a_date_and_time_alone_the_minutes_around_it() -> None:
    assert terms("firstSeen:2024-05-01") == (DateTerm("first_seen", ">=", when=MAY_1),
                                             DateTerm("first_seen", "<", when=MAY_1 + 86400))
    assert terms("lastSeen:=2024-05-01T06:00:00") == (DateTerm("last_seen", ">=", when=MAY_1 + 6 * 3600 - 300),
                                                      DateTerm("last_seen", "<", when=MAY_1 + 6 * 3600 + 300))


def test_unquoted_words_are_one_phrase_and_quoted_phrases_are_their_own() -> None:
    assert terms("checkout  failed is:resolved for   good") == (TextTerm("checkout failed for good"), IsTerm("resolved"))
    assert terms('level:error "Connection  reset" by peer') == (
        TagTerm("level", ("error",)), TextTerm("Connection  reset"), TextTerm("by peer"))
    assert terms('""') == ()  # an empty phrase matches everything: no term


def test_a_key_with_nothing_after_its_colon_is_text() -> None:
    assert terms("TypeError: foo") == (TextTerm("TypeError: foo"),)
    assert terms("!foo bar") == (TextTerm("!foo bar"),)


@pytest.mark.parametrize(("text", "expected"), [
    ("1234", IdTerm(1234)),
    ("LOOKOUT-1Z", ShortIdTerm("LOOKOUT", 71)),
    ("billing-service-a", ShortIdTerm("BILLING-SERVICE", 10)),
    ("0123456789abcdef0123456789ABCDEF", EventIdTerm("0123456789abcdef0123456789abcdef")),
    ("01234567-89ab-cdef-0123-456789ABCDEF", EventIdTerm("0123456789abcdef0123456789abcdef")),
])
def test_a_query_of_one_id_is_a_direct_hit(text: str, expected: object) -> None:
    query = parse(f"  {text} ")
    assert query.terms == (expected,) and query.direct == expected


def test_an_id_among_other_terms_is_text() -> None:
    for text in ("error 1234", '"1234"', "is:resolved LOOKOUT-1"):
        query = parse(text)
        assert query.direct is None and any(isinstance(term, TextTerm) for term in query.terms), text
    assert parse("0").terms == (TextTerm("0"),)  # no issue has id 0
    assert parse("1" * 19).terms == (TextTerm("1" * 19),)  # past any id


@pytest.mark.parametrize(("text", "sentence"), [
    ("timesSeen:>abc", '"timesSeen:>abc" needs a number after the comparison.'),
    ("timesSeen:lots", '"timesSeen:lots" needs a number.'),
    ("timesSeen:>-1", '"timesSeen:>-1" needs a number after the comparison.'),
    ("is:bogus", 'Unknown "is:" value "bogus": use unresolved, resolved, ignored, regressed, assigned or unassigned.'),
    ("is:[resolved, ignored]", '"is:[resolved, ignored]" takes one value, not a list.'),
    ("age:yesterday", '"age:yesterday" needs a time like -24h or +7d, or an ISO date like 2024-05-01'
                      " (after >, <, >= or <= if you like)."),
    ("lastSeen:-24y", '"lastSeen:-24y" needs a time like -24h or +7d, or an ISO date like 2024-05-01'
                      " (after >, <, >= or <= if you like)."),
    ("firstSeen:>-24h", '"firstSeen:>-24h" needs a time like -24h or +7d, or an ISO date like 2024-05-01'
                        " (after >, <, >= or <= if you like)."),
    ("firstSeen:2024-13-01", '"firstSeen:2024-13-01" needs a time like -24h or +7d, or an ISO date like 2024-05-01'
                             " (after >, <, >= or <= if you like)."),
    ("!lastSeen:-1h", '"!lastSeen:-1h" cannot be negated: use the opposite comparison.'),
    ("!timesSeen:>3", '"!timesSeen:>3" cannot be negated: use the opposite comparison.'),
    ("has:what?", '"has:what?" needs a tag key of up to 32 letters, digits, _, . or -.'),
    ('level:"error', 'The quote of "level:"error" is never closed.'),
    ('oops "never closed', 'The quote of ""never closed" is never closed.'),
    ("release:[1.0, 1.1", 'The list of "release:[1.0, 1.1" is never closed with ].'),
    ("release:[1.0,,1.1] x", '"release:[1.0,,1.1]" has an empty value in its list.'),
    ('level:"error"x', '"level:"error"x" needs a space after its value.'),
    ("release:[a]b", '"release:[a]b" needs a space after its value.'),
    ("k" * 33 + ":v", f'"{"k" * 33}:v" names a key over 32 characters, longer than any tag\'s.'),
    ("url:" + "u" * 201, f'"url:{"u" * 56}…" has a value over 200 characters, longer than any tag\'s.'),
])
def test_a_query_that_does_not_parse_gets_a_sentence_naming_its_term(text: str, sentence: str) -> None:
    with pytest.raises(SearchError) as raised:
        parse(f"is:unresolved {text}")
    assert str(raised.value) == sentence
    assert isinstance(raised.value, ValueError)


def test_bounds_are_checked_before_matching() -> None:
    assert parse("x" * MAX_QUERY_CHARS).terms == (TextTerm("x" * MAX_QUERY_CHARS),)
    with pytest.raises(SearchError, match="^The search is 1,001 characters long; at most 1,000 are allowed.$"):
        parse("x" * (MAX_QUERY_CHARS + 1))
    assert len(parse(" ".join(f"k{i}:v" for i in range(MAX_TERMS))).terms) == MAX_TERMS
    with pytest.raises(SearchError, match='^The search stops at 50 terms: "k50:v" is one too many.$'):
        parse(" ".join(f"k{i}:v" for i in range(MAX_TERMS + 1)))
    words = " ".join(["word"] * 150)  # words are one phrase: one term
    assert parse(f"{words} is:resolved").terms == (TextTerm(words), IsTerm("resolved"))
    listed = ", ".join(str(i) for i in range(MAX_LIST_VALUES))
    assert len(parse(f"release:[{listed}]").terms[0].values) == MAX_LIST_VALUES
    with pytest.raises(SearchError, match=r"^The list of \"release:\[0, 1, .*\" has over 100 values.$"):
        parse(f"release:[{listed}, 100]")
