"""What the alert modules pass each other: an alert as a message lists it, a channel, a request to
send, and how a send went.

    ingest txn ──triggers.py──▶ alert row ──sender.py (lease holder)──▶ one delivery per channel
         ──messages.py──▶ e-mail (mail.py, SMTP) / webhook request (outbound.py, HTTP) ──▶ Delivered

Only the fields of `AlertItem` ever leave the app in a message: no request bodies, no user data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RULES = ("new", "regression", "spike", "test")
# A cron monitor's state changes (app/monitors/): its issue_id is the monitor's id.
MONITOR_RULES = ("missed", "failed", "timeout", "recovered")
KINDS = ("email", "slack", "discord", "json")
WEBHOOK_KINDS = ("slack", "discord", "json")
ERROR_BYTES = 1024  # at most this much of a failure (an answer's body, an SMTP reply) is kept


@dataclass(frozen=True)
class AlertItem:
    """One due alert, as every message lists it."""

    dedupe_key: str  # 32 hex digits, the same in every retry of this alert
    rule: str  # one of RULES
    reason: str  # why it fired, a sentence ("A new issue.", "More than 100 events in 10 minutes.")
    project: str  # the project's name
    issue_id: int
    title: str
    level: str
    environment: str
    release: str
    culprit: str  # the stored culprit: the original, symbolicated frame when there is one
    first_seen: float  # epoch seconds
    last_seen: float
    event_count: int
    link: str  # the issue's page: LOOKOUT_PUBLIC_URL + /issue?id=<id> (or the path alone without it)


@dataclass(frozen=True)
class Channel:
    """Where alerts go (a row of `alert_channel`)."""

    id: int
    kind: str  # one of KINDS
    target: str  # an e-mail address, or the webhook's URL
    secret: str = ""  # json: the HMAC-SHA256 key
    project_id: int | None = None  # None: every project
    origin: str = "console"  # console or env
    enabled: bool = True


@dataclass(frozen=True)
class Outgoing:
    """A webhook request's body and headers (Content-Type, X-Lookout-Signature, ...)."""

    body: bytes
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Delivered:
    """How one send went: `ok`, else `error`, a sentence with at most ERROR_BYTES of the answer."""

    ok: bool
    error: str = ""
    status: int | None = None  # the HTTP status, when there was an answer


def cut_error(text: str) -> str:
    """At most ERROR_BYTES of `text` (UTF-8), cut on a character boundary."""
    data = text.encode("utf-8", "replace")
    return text if len(data) <= ERROR_BYTES else data[:ERROR_BYTES].decode("utf-8", "ignore")
