"""Sentry's issue search syntax, parsed into one typed `Query` (conditions.py turns it into SQL).

    is:unresolved browser.name:Chrome !environment:staging release:[1.0, 1.1] age:-24h checkout failed

Terms are `key:value` filters (`!` negates; a value may be "quoted", a [list] or hold `*` wildcards)
and free text: the unquoted words of the query joined by single spaces are one phrase, as Sentry
reads them, and each quoted phrase is another. A query of one bare issue id, short id or event id
names that issue (`Query.direct`). What does not parse raises `SearchError`, one sentence naming the
term, so the console and the API can show it as it is. The query is bounded before anything is read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

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
    Term,
    TextTerm,
)
from app.inbox.short_ids import parse_short_id

MAX_QUERY_CHARS, MAX_TERMS, MAX_LIST_VALUES = 1000, 50, 100
MAX_KEY, MAX_VALUE = 32, 200  # a tag's key and value, as the tag index keeps them (app/inbox/tag_index.py)
IS_VALUES = ("unresolved", "resolved", "ignored", "regressed", "assigned", "unassigned")
DATE_KEYS = {"firstSeen": "first_seen", "age": "first_seen", "lastSeen": "last_seen"}
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
AROUND_S = 300  # a date and time with no comparison means these seconds either side, as in Sentry

_FILTER = re.compile(r"(!?)(tags\[[^\[\]\s\"]{1,64}\]|[A-Za-z0-9_.\-]+):(?=\S)")
_KEY = re.compile(r"[A-Za-z0-9_.\-]+")
_RELATIVE = re.compile(r"([+-])([0-9]{1,6})([smhdw])")
_COMPARED = re.compile(r"(>=|<=|>|<|=)?(.*)", re.DOTALL)
_NUMBER = re.compile(r"[0-9]{1,18}")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_EVENT_ID = re.compile(r"[0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


@dataclass(frozen=True)
class Token:
    """One term as written: a filter (`key` set) or free text (`key` None)."""

    source: str  # as written, for error sentences
    key: str | None
    values: tuple[str, ...]
    negated: bool = False
    quoted: bool = False
    listed: bool = False


def parse(text: str) -> Query:
    """The typed query of `text`; `SearchError` if it does not parse or is over a bound."""
    if len(text) > MAX_QUERY_CHARS:
        raise SearchError(f"The search is {len(text):,} characters long; at most {MAX_QUERY_CHARS:,} are allowed.")
    tokens = list(_tokens(text))
    if len(tokens) == 1 and tokens[0].key is None and not tokens[0].quoted:
        direct = direct_term(tokens[0].values[0])
        if direct is not None:
            return Query((direct,))
    terms: list[Term] = []
    words: list[str] = []
    phrase_at = 0  # where the words' phrase goes: at the first word
    counted = 0
    for token in tokens:
        word = token.key is None and not token.quoted
        counted += 0 if word and words else 1
        if counted > MAX_TERMS:
            raise SearchError(f"The search stops at {MAX_TERMS} terms: {_shown(token.source)} is one too many.")
        if word:
            phrase_at = phrase_at if words else len(terms)
            words.append(token.values[0])
        elif token.key is None:
            terms.extend([TextTerm(token.values[0])] if token.values[0] else [])
        else:
            terms.extend(_filter(token))
    if words:
        terms.insert(phrase_at, TextTerm(" ".join(words)))
    return Query(tuple(terms))


def direct_term(word: str) -> IdTerm | ShortIdTerm | EventIdTerm | None:
    """What a query of this one word names directly: an event id, an issue id or a short id."""
    if _EVENT_ID.fullmatch(word):
        return EventIdTerm(word.replace("-", "").lower())
    if _NUMBER.fullmatch(word) and int(word) > 0:
        return IdTerm(int(word))
    found = parse_short_id(word)
    return ShortIdTerm(*found) if found else None


def _tokens(text: str) -> Iterator[Token]:
    """The terms of `text` as written, left to right."""
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return
        start = at
        if text[at] == '"':
            phrase, at = _quoted(text, at, start)
            yield Token(text[start:at], None, (phrase,), quoted=True)
        elif (found := _FILTER.match(text, at)) is not None:
            at = found.end()
            if text[at] == '"':
                value, at = _quoted(text, at, start)
                token = Token(text[start:at], found.group(2), (value,), bool(found.group(1)), quoted=True)
            elif text[at] == "[":
                values, at = _listed(text, at, start)
                token = Token(text[start:at], found.group(2), values, bool(found.group(1)), listed=True)
            else:
                at = _word_end(text, at)
                token = Token(text[start:at], found.group(2), (text[found.end():at],), bool(found.group(1)))
            if at < len(text) and not text[at].isspace():
                raise SearchError(f"{_shown(text[start:_word_end(text, at)])} needs a space after its value.")
            yield token
        else:
            at = _word_end(text, at)
            yield Token(text[start:at], None, (text[start:at],))


def _word_end(text: str, at: int) -> int:
    while at < len(text) and not text[at].isspace():
        at += 1
    return at


def _quoted(text: str, at: int, start: int) -> tuple[str, int]:
    """The quoted text opening at `at` (`\\"` is a quote in it), and where it ends."""
    value = []
    at += 1
    while at < len(text):
        if text[at] == "\\" and at + 1 < len(text) and text[at + 1] in '"\\':
            value.append(text[at + 1])
            at += 2
        elif text[at] == '"':
            return "".join(value), at + 1
        else:
            value.append(text[at])
            at += 1
    raise SearchError(f"The quote of {_shown(text[start:])} is never closed.")


def _listed(text: str, at: int, start: int) -> tuple[tuple[str, ...], int]:
    """The values of the list opening at `at` (`[a, "b c"]`), and where it ends."""
    values: list[str] = []
    at += 1
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at < len(text) and text[at] == '"':
            value, at = _quoted(text, at, start)
        else:
            end = at
            while end < len(text) and text[end] not in ",]":
                end += 1
            value, at = text[at:end].strip(), end
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text) or text[at] not in ",]":
            raise SearchError(f"The list of {_shown(text[start:])} is never closed with ].")
        if not value:
            closing = text.find("]", at)
            raise SearchError(f"{_shown(text[start:closing + 1 if closing >= 0 else len(text)])} has an empty value in its list.")
        values.append(value)
        if len(values) > MAX_LIST_VALUES:
            raise SearchError(f"The list of {_shown(text[start:at])} has over {MAX_LIST_VALUES} values.")
        at += 1
        if text[at - 1] == "]":
            return tuple(values), at


def _filter(token: Token) -> list[Term]:
    """The typed terms of one `key:value` filter (two for a date without a comparison: its range)."""
    key = token.key or ""
    if key in ("is", "has", "timesSeen", *DATE_KEYS) and token.listed:
        raise SearchError(f"{_shown(token.source)} takes one value, not a list.")
    if key in ("timesSeen", *DATE_KEYS) and token.negated:
        raise SearchError(f"{_shown(token.source)} cannot be negated: use the opposite comparison.")
    value = token.values[0]
    if key == "is":
        if value.lower() not in IS_VALUES:
            raise SearchError(f'Unknown "is:" value "{_cut(value)}": use {", ".join(IS_VALUES[:-1])} or {IS_VALUES[-1]}.')
        return [IsTerm(value.lower(), token.negated)]
    if key == "has":
        if not _KEY.fullmatch(value) or len(value) > MAX_KEY:
            raise SearchError(f"{_shown(token.source)} needs a tag key of up to {MAX_KEY} letters, digits, _, . or -.")
        return [HasTerm(value, token.negated)]
    if key == "assigned":
        return [AssignedTerm(token.values, token.negated)]
    if key == "timesSeen":
        return [_count(token)]
    if key in DATE_KEYS:
        return _dates(token, DATE_KEYS[key])
    return [_tag(token, key[5:-1] if key.startswith("tags[") else key)]


def _tag(token: Token, key: str) -> Term:
    if len(key) > MAX_KEY:
        raise SearchError(f"{_shown(token.source)} names a key over {MAX_KEY} characters, longer than any tag's.")
    if token.quoted and not token.values[0]:
        return HasTerm(key, not token.negated)  # `key:""`: issues without the tag, as in Sentry
    if any(len(value) > MAX_VALUE for value in token.values):
        raise SearchError(f"{_shown(token.source)} has a value over {MAX_VALUE} characters, longer than any tag's.")
    return TagTerm(key, token.values, token.negated, any("*" in value for value in token.values))


def _count(token: Token) -> CountTerm:
    compared = _COMPARED.fullmatch(token.values[0])
    op, number = (compared.group(1), compared.group(2)) if compared else (None, "")
    if not _NUMBER.fullmatch(number):
        after = " after the comparison" if op else ""
        raise SearchError(f"{_shown(token.source)} needs a number{after}.")
    return CountTerm(op or "=", int(number))


def _dates(token: Token, field: str) -> list[Term]:
    """`-24h`: within the last 24 hours; `+7d`: more than 7 days ago; `>2024-05-01` (or <, >=, <=);
    a date alone is that day (UTC), a date and time alone the 5 minutes either side of it."""
    value = token.values[0]
    relative = _RELATIVE.fullmatch(value)
    if relative is not None:
        sign, amount, unit = relative.groups()
        return [DateTerm(field, ">=" if sign == "-" else "<=", ago=float(int(amount) * UNITS[unit]))]
    compared = _COMPARED.fullmatch(value)
    op, written = (compared.group(1), compared.group(2)) if compared else (None, value)
    when = _instant(written)
    if when is None:
        raise SearchError(f"{_shown(token.source)} needs a time like -24h or +7d, or an ISO date like 2024-05-01"
                          " (after >, <, >= or <= if you like).")
    if op and op != "=":
        return [DateTerm(field, op, when=when)]
    start, end = (when, when + 86400) if _DATE.fullmatch(written) else (when - AROUND_S, when + AROUND_S)
    return [DateTerm(field, ">=", when=start), DateTerm(field, "<", when=end)]


def _instant(written: str) -> float | None:
    """An ISO date or date and time as epoch seconds (UTC unless it says otherwise); None if it is not one."""
    if len(written) > 40 or not written[:1].isdigit():
        return None
    try:
        moment = datetime.fromisoformat(written)
    except ValueError:
        return None
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) / timedelta(seconds=1)


def _cut(text: str, most: int = 60) -> str:
    return text if len(text) <= most else text[:most] + "…"


def _shown(source: str) -> str:
    """A term in an error sentence: quoted, and cut short if long."""
    return f'"{_cut(source)}"'
