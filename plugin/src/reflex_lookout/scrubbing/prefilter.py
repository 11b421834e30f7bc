"""A proof, from an item's JSON bytes alone, that no scrubbing rule can match anything in it.

Relay's rules under a project's data-scrubbing options (scrubbing/relay.py `pii_config`) match
either key names or string values, and every one of them needs some text to be present that this
module looks for, in the bytes as sent:

- a key or value holding one of the words of Relay's password rule (`password`, `secret`, `passwd`,
  `api_key`/`api-key`, `apikey`, `auth`, `credentials`, `mysql_pwd`, `privatekey`,
  `private_key`/`private-key`, `token`, `otp`, `two_factor`), `bearer` (its token rule and
  Lookout's), `cookie` (Lookout's rule, Relay's cookie rules, whose selectors name `cookies`), or a
  project's sensitive field: any of them anywhere, in any case;
- a card number (Relay's: 15 or 16 digits, dashes or spaces between any two), an IBAN (two capitals,
  two digits, eleven letters or digits), a US social security number (`ddd-dd-dddd`): runs of
  digits like those, with any JSON escape of a space between them;
- a PEM key (`-----BEGIN`), a URL's user and password (`//user:pass@`, slashes escaped or not), an
  e-mail address (Relay replaces them in log messages: `@` then a dot), an IP address (only when the
  project scrubs IP addresses: any `digits.digits` or `:` between hex digits).

The search is case-insensitive over ASCII. Relay's regexes are Unicode-aware (`(?i)` folds `ſ` to
`s` and the Kelvin sign to `k`; `\\d` and `\\s` take other scripts' digits and spaces), so an item with
any byte outside ASCII, or any `\\u` escape, proves nothing here: it takes Relay's full path. So does
any item when a sensitive field is not plain ASCII. What is proven clean is left as sent: Relay would
have found nothing in it (tests/ingest/test_scrub_differential.py holds this against Relay itself).
"""

from __future__ import annotations

import functools
import re

from reflex_lookout.scrubbing.settings import ScrubbingSettings

# Relay's password rule (PASSWORD_KEY_REGEX, TOKEN_KEY_REGEX), its bearer rule, Lookout's cookie rule
# and the cookie selectors; `factor` stands for `two_factor`/`two-factor`, `api` for `api_key`/`api-key`.
WORDS = ("password", "secret", "passwd", "api", "auth", "credentials", "mysql_pwd", "private", "token", "otp",
         "factor", "bearer", "cookie")
# A space or tab as JSON may write it between digits ([-\s]? in Relay's card rule).
_GAP = rb"(?:[-\s]|\\[nrtf])?"
# Values whatever the key: cards (15 or 16 digits), SSNs, IBANs, PEM keys, a URL's credentials.
_VALUES = [
    rb"[0-9](?:" + _GAP + rb"[0-9]){14}",
    rb"[0-9]{3}-[0-9]{2}-[0-9]{4}",
    rb"[A-Z]{2}[0-9]{2}[a-zA-Z0-9]{11}",
    rb"-----BEGIN",
    rb"(?:/|\\/)(?:/|\\/)[a-zA-Z0-9%_.:-]+@",
    rb"@[a-zA-Z0-9-]+\.",
]
_IP = [rb"[0-9]\.[0-9]", rb"[0-9a-fA-F]:[0-9a-fA-F:]", rb"::"]
_NOT_ASCII = re.compile(rb"[\x80-\xff]|\\u")


@functools.lru_cache(maxsize=256)
def _search(settings: ScrubbingSettings) -> tuple[tuple[bytes, ...], re.Pattern[bytes]] | None:
    """The words (lowercase) and the value pattern for `settings`; None where nothing is provable."""
    if not all(field.isascii() for field in settings.sensitive_fields):
        return None
    words = (*WORDS, *(field.lower() for field in settings.sensitive_fields if field))
    if any(not word for word in words):
        return None
    patterns = [*_VALUES, *(_IP if settings.scrub_ip_addresses else [])]
    return tuple(dict.fromkeys(word.encode() for word in words)), re.compile(b"|".join(patterns))


def holds_nothing_to_scrub(payload: bytes, settings: ScrubbingSettings) -> bool:
    """Whether `payload` (an item's JSON as sent) provably holds nothing any rule of `settings`
    matches (False: maybe it does; Relay must look)."""
    if not settings.scrub_data:
        return True
    found = _search(settings)
    if found is None or _NOT_ASCII.search(payload) is not None:
        return False
    words, values = found
    lowered = payload.lower()
    if any(word in lowered for word in words):
        return False
    return values.search(payload) is None
