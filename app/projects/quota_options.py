"""A project's quotas: how many error events it may send a minute and an hour (0: no limit, the
default), set on its settings page and applied at ingest (app/ingest/quotas.py).

Bounded here, once: whole numbers from 0 to MAX_PER_MINUTE and MAX_PER_HOUR; what a person typed is
read by `number_of`, which refuses anything else with a sentence."""

from __future__ import annotations

from dataclasses import dataclass, fields

MAX_PER_MINUTE = 1_000_000  # ~16,000 events a second: more than one Lookout ingests
MAX_PER_HOUR = 60 * MAX_PER_MINUTE
MAX_TYPED_CHARS = 20  # a number as typed, spaces and thousands separators included
# Each quota by its field name: its window in seconds, its largest value and what the page calls it.
WINDOWS: dict[str, int] = {"per_minute": 60, "per_hour": 3600}
MAXIMA: dict[str, int] = {"per_minute": MAX_PER_MINUTE, "per_hour": MAX_PER_HOUR}
LABELS: dict[str, str] = {"per_minute": "Events a minute", "per_hour": "Events an hour"}


@dataclass(frozen=True)
class QuotaOptions:
    """A project's quotas of error events (Sentry's `error` category: errors, default events and
    security reports; transactions, logs and sessions are not counted)."""

    per_minute: int = 0
    per_hour: int = 0

    def checked(self) -> QuotaOptions:
        """These quotas, or ValueError with a sentence naming the one out of bounds."""
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAXIMA[field.name]:
                raise ValueError(f"{LABELS[field.name]} must be a whole number from 0 (no limit) to "
                                 f"{MAXIMA[field.name]:,}.")
        return self

    def limits(self) -> dict[int, int]:
        """{window in seconds: events allowed in it}, for the quotas that are set."""
        return {WINDOWS[f.name]: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) > 0}


def number_of(name: str, typed: str) -> int:
    """The quota `name` as a person typed it ("" or "0": no limit; "1,000" and "1 000" are read as
    1000), or ValueError with a sentence."""
    sentence = f"{LABELS[name]} must be a whole number from 0 (no limit) to {MAXIMA[name]:,}."
    if not isinstance(typed, str) or len(typed) > MAX_TYPED_CHARS:
        raise ValueError(sentence)
    digits = typed.strip().replace(",", "").replace(" ", "").replace("_", "")
    if not digits:
        return 0
    if not (digits.isascii() and digits.isdigit()) or int(digits) > MAXIMA[name]:
        raise ValueError(sentence)
    return int(digits)
