"""What a message shows of an alert: its `AlertItem` fields and nothing else, each on one line and
cut to a fixed length, times in UTC, the link only when it is a plain http(s) URL. The message
builders (app/alerts/messages.py) escape these for where they land."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, urlsplit

from app.alerts.alert import AlertItem
from app.protocol.fields import LATEST, UNSTORABLE

# The most characters of each field a message shows (an ellipsis ends a cut one). Chat messages
# escape them, and then show at most as many UTF-16 code units (what the services count).
LENGTHS = {"key": 64, "rule": 16, "reason": 200, "project": 100, "title": 200, "level": 16, "environment": 64,
           "release": 200, "culprit": 200}
LINK_LENGTH = 500  # a longer link is shown as text, never as a link
_MOST_EVENTS = 2**63 - 1  # a database's bigint: no count is larger
EMPTY = "—"  # shown for an empty field (Discord refuses empty values)
LABELS = {"new": "New issue", "regression": "Regression", "spike": "Spike", "test": "Test alert",
          "missed": "Monitor missed", "failed": "Monitor failed", "timeout": "Monitor timed out",
          "recovered": "Monitor recovered"}
# Line and paragraph breaks, other control characters and bidirectional overrides: none may break
# a header or a line, or reverse how a title reads.
_UNSHOWN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# A link's characters that are kept; any other (<, >, |, &, quotes, spaces...) is percent-encoded.
_LINK_SAFE = "/:@!$'()*+,;=%~?#[]"


@dataclass(frozen=True)
class Shown:
    """An alert's fields as every message shows them."""

    key: str
    rule: str
    label: str  # the rule, for people: "New issue"
    reason: str
    project: str
    issue_id: int
    title: str
    level: str
    environment: str
    release: str
    culprit: str
    first_seen: datetime
    last_seen: datetime
    event_count: int
    link: str  # the issue's page as given ("" when longer than LINK_LENGTH)
    web_link: str  # the same, when it is an http(s) URL safe to link to; else ""

    @property
    def first_seen_iso(self) -> str:
        return _iso(self.first_seen)

    @property
    def last_seen_iso(self) -> str:
        return _iso(self.last_seen)

    def facts(self) -> list[tuple[str, str, int]]:
        """The fields a message lists under the title, named (EMPTY for an empty one), with how long
        a chat shows each."""
        return [(name, value or EMPTY, units) for name, value, units in self._facts()]

    def _facts(self) -> list[tuple[str, str, int]]:
        return [
            ("Project", self.project, 100),
            ("Level", self.level, 16),
            ("Environment", self.environment, 64),
            ("Release", self.release, 200),
            ("Culprit", self.culprit, 200),
            ("First seen", _readable(self.first_seen), 30),  # room for Discord's escapes of - and :
            ("Last seen", _readable(self.last_seen), 30),
            ("Events", f"{self.event_count:,}", 32),
            ("Dedupe key", self.key, 64),
        ]


def shown(item: AlertItem) -> Shown:
    """`item` as messages show it: every string bounded and on one line, whatever it held."""
    link = clean(item.link, LINK_LENGTH + 1)
    link = "" if len(link) > LINK_LENGTH else link
    return Shown(
        key=clean(item.dedupe_key, LENGTHS["key"]),
        rule=clean(item.rule, LENGTHS["rule"]),
        label=LABELS.get(item.rule, "Alert"),
        reason=clean(item.reason, LENGTHS["reason"]),
        project=clean(item.project, LENGTHS["project"]),
        issue_id=int(item.issue_id),
        title=clean(item.title, LENGTHS["title"]),
        level=clean(item.level, LENGTHS["level"]),
        environment=clean(item.environment, LENGTHS["environment"]),
        release=clean(item.release, LENGTHS["release"]),
        culprit=clean(item.culprit, LENGTHS["culprit"]),
        first_seen=_time(item.first_seen),
        last_seen=_time(item.last_seen),
        event_count=min(max(0, int(item.event_count)), _MOST_EVENTS),
        link=link,
        web_link=_web_link(link),
    )


def clean(text: str, length: int) -> str:
    """`text` on one line, at most `length` characters; a cut one ends with an ellipsis."""
    head = UNSTORABLE.sub("\ufffd", _UNSHOWN.sub(" ", text[:length])).strip()
    return head if len(text) <= length else head[: length - 1].rstrip() + "…"


def fit(text: str, units: int, escape: Callable[[str], str] = str) -> str:
    """`text` escaped character by character, at most `units` UTF-16 code units long: an ellipsis
    ends it when cut, and no escape is ever cut in two."""
    pieces = [escape(c) for c in text]
    if sum(map(_units, pieces)) <= units:
        return "".join(pieces)
    kept, used = [], 1  # the ellipsis
    for piece in pieces:
        used += _units(piece)
        if used > units:
            break
        kept.append(piece)
    return "".join(kept) + "…"


def _units(text: str) -> int:
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _time(seconds: float) -> datetime:
    finite = seconds if math.isfinite(seconds) else 0.0
    return datetime.fromtimestamp(min(max(finite, 0.0), LATEST - 1), UTC)


def _iso(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def _readable(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _web_link(link: str) -> str:
    try:
        parts = urlsplit(link)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    safe = quote(link, safe=_LINK_SAFE)
    return safe if len(safe) <= LINK_LENGTH else ""
