"""A proof, from an item's JSON bytes alone, that no scrubbing rule can match anything in it.

Relay's rules under a project's data-scrubbing options (scrubbing/relay.py `pii_config`) match
either key names or string values, and every one of them needs some text to be present that this
module looks for, in the bytes as sent (`PATTERNS`):

- a key or value holding one of the words of Relay's password rule (`password`, `secret`, `passwd`,
  `api_key`/`api-key`, `apikey`, `auth`, `credentials`, `mysql_pwd`, `privatekey`,
  `private_key`/`private-key`, `token`, `otp`, `two_factor`/`two-factor`), `bearer` (its token rule and
  Lookout's), `cookie` (Lookout's rule, Relay's cookie rules, whose selectors name `cookies`), or a
  project's sensitive field: any of them anywhere, in any case;
- a card number (Relay's: 15 or 16 digits, a dash or a space between any two), a US social
  security number (`ddd-dd-dddd`), an IBAN (two capitals, two digits, eleven letters or digits),
  a PEM key (`-----BEGIN`), a URL's user and password (`//user:pass@`, slashes escaped or not),
  an e-mail address (`@`, then a domain with a dot: Relay replaces them in messages only, so where
  the caller gives an item's messages they alone are searched for one); with
  the project scrubbing IP addresses, four dotted numbers, `::` or eight groups of hex digits, and
  the names of the fields it then removes whatever they hold (`ip_address`, `REMOTE_ADDR`, ...). A space
  between digits may be written as one of JSON's escapes (`\\n`, `\\r`, `\\t`, `\\f`).

The search is over ASCII. Relay's regexes are Unicode-aware (`(?i)` folds `ſ` to `s` and the Kelvin
sign to `k`; `\\d` and `\\s` take other scripts' digits and spaces), so an item with any byte outside
ASCII, or any `\\u` escape, proves nothing here: it takes Relay's full path. So does every item
when a sensitive field is not plain ASCII, or when Hyperscan cannot be loaded.

The patterns are compiled once per settings into one Hyperscan database (Intel's multi-pattern
matcher, from PyPI's `hyperscan`), which scans a 48 KB event in ~5 µs; Python's own `re` took
3.3 ms for the same alternation (more than Relay itself), and thirteen `in` tests ~270 µs.
What is proven clean is left as sent: Relay would have found nothing in it;
tests/ingest/test_scrub_differential.py holds this against Relay itself.
"""

from __future__ import annotations

import functools
import re
import threading
from typing import Any

from reflex_lookout.scrubbing.settings import ScrubbingSettings

try:
    import hyperscan
except ImportError:  # pragma: no cover (a platform without its wheel: every item goes to Relay)
    hyperscan = None  # type: ignore[assignment]

# Relay's password rule (PASSWORD_KEY_REGEX, TOKEN_KEY_REGEX), its bearer rule, Lookout's cookie rule
# and the cookie selectors, as regexes: Relay takes `api_key`, `api-key`, `apikey` (and the same of
# `private…key`), `two_factor` and `two-factor`, no other separator (probed against Relay itself).
# Not `api` alone: `/api/` is in most URLs, and each such item would go to Relay for nothing.
WORDS = ("password", "secret", "passwd", r"api[-_]?key", "auth", "credentials", "mysql_pwd", r"private[-_]?key",
         "token", "otp", r"two[-_]factor", "bearer", "cookie")
_GAP = rb"(?:[-\s]|\\[nrtf])?"
# (pattern, caseless)
PATTERNS: tuple[tuple[bytes, bool], ...] = (
    *((word.encode(), True) for word in WORDS),
    (rb"-----BEGIN", True),
    # A card number as Relay's CREDITCARD_REGEX takes one: a vendor's prefix (Amex, Visa, Mastercard,
    # Discover) and twelve more digits, a dash or a space before any of them (not any 15 digits: a
    # thread id or a timestamp in nanoseconds is no card, and Relay leaves it).
    (rb"(?:3[47][0-9]|4[0-9]{3}|5[1-5][0-9]{2}|65[0-9]{2}|6011)(?:" + _GAP + rb"[0-9]){12}", False),
    (rb"[0-9]{3}-[0-9]{2}-[0-9]{4}", False),  # a US social security number
    (rb"[A-Z]{2}[0-9]{2}[a-zA-Z0-9]{11}", False),  # an IBAN
    (rb"(?:/|\\/)(?:/|\\/)[a-zA-Z0-9%_.:-]+@", False),  # a URL's user and password
    (rb"\\u", False),  # an escaped character: maybe one outside ASCII
)
# An e-mail address, which Relay replaces only in messages (`$logentry.formatted`, a log line's body)
# and in the AI fields its rules name (`gen_ai.…`, `mcp.…` in span data and attributes): looked for in
# the messages when the caller gives them and the item names no such field, else anywhere.
EMAIL: tuple[bytes, bool] = (rb"@[a-zA-Z0-9-]+\.", False)
EMAIL_ANYWHERE: tuple[tuple[bytes, bool], ...] = ((rb"gen_ai", True), (rb"mcp\.", True))
# Relay's IPv4 rule needs four dotted numbers; each form of its IPv6 rule holds `::` or eight groups;
# and the fields its conversion removes whatever they hold ($http.env.REMOTE_ADDR, $user.ip_address,
# $sdk.client_ip, a span's `user.ip`, an attribute `client.address`).
IP_PATTERNS: tuple[tuple[bytes, bool], ...] = (
    (rb"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}", False),
    (rb"::", False),
    (rb"(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}", False),
    *((re.escape(field).encode(), True) for field in ("remote_addr", "ip_address", "client_ip", "user.ip", "client.address")),
)


class _Matcher:
    """One compiled database and a scratch space per thread (Hyperscan's scratch is one scan's at a time)."""

    def __init__(self, patterns: list[tuple[bytes, bool]]) -> None:
        self.database = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
        self.database.compile(
            expressions=[pattern for pattern, _ in patterns], ids=list(range(len(patterns))),
            flags=[hyperscan.HS_FLAG_SINGLEMATCH | (hyperscan.HS_FLAG_CASELESS if caseless else 0)
                   for _, caseless in patterns])
        self._local = threading.local()

    def found_in(self, data: bytes) -> bool:
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = hyperscan.Scratch(self.database)
        try:
            self.database.scan(data, match_event_handler=_stop, scratch=scratch)
        except hyperscan.ScanTerminated:
            return True
        return False


def _stop(*_: Any) -> bool:
    return True  # the first match answers: the scan stops


@functools.lru_cache(maxsize=512)
def _matcher(settings: ScrubbingSettings, email: bool) -> _Matcher | None:
    """The compiled patterns for `settings`, with or without the e-mail address (`email`: with it,
    else with the names that put it anywhere); None where nothing is provable."""
    if hyperscan is None or not all(field.isascii() and field for field in settings.sensitive_fields):
        return None
    fields = [(re.escape(field).encode(), True) for field in settings.sensitive_fields]
    return _Matcher([*PATTERNS, *((EMAIL,) if email else EMAIL_ANYWHERE), *fields,
                     *(IP_PATTERNS if settings.scrub_ip_addresses else ())])


@functools.cache
def _email_matcher() -> _Matcher | None:
    return None if hyperscan is None else _Matcher([EMAIL])


def holds_nothing_to_scrub(payload: bytes, settings: ScrubbingSettings, messages: bytes | None = None) -> bool:
    """Whether `payload` (an item's JSON as sent) provably holds nothing any rule of `settings`
    matches (False: maybe it does; Relay must look). `messages`: the JSON of every value of the item
    Relay reads as a message (an event's `message`, `logentry` and the legacy keys Relay moves there;
    log lines' bodies), when the caller has them: an e-mail address is then looked for there alone."""
    if not settings.scrub_data:
        return True
    matcher = _matcher(settings, messages is None)
    if matcher is None or not payload.isascii():
        return False
    if matcher.found_in(payload):
        return False
    email = _email_matcher()
    return messages is None or (email is not None and messages.isascii() and not email.found_in(messages))
