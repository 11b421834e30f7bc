"""The message that tells a channel about one alert or a digest of them: a JSON, Slack or Discord
webhook request, or an e-mail, each within its service's limits, with every outside string escaped
for where it lands. What a message shows of an alert is app/alerts/message_fields.py's `Shown`.

Every message carries a dedupe key (`message_key`: the same alerts give the same key, so a
receiver recognises a repeated delivery), and each alert's own key.
"""

from __future__ import annotations

import email.policy
import hashlib
import hmac
import html
import json
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import formatdate, getaddresses
from typing import Any

from app.alerts.alert import MONITOR_RULES, AlertItem, Channel, Outgoing
from app.alerts.message_fields import EMPTY, Shown, fit, shown

# The most alerts one message lists, per channel kind. Chat services cap a message: Slack at 50
# blocks (a header, 2 per alert, a footer) and 40,000 characters of text; Discord at 10 embeds
# and 6,000 characters in all: 4 embeds of the longest alerts (~1,300 characters each).
DIGEST_LIMIT: dict[str, int] = {"email": 50, "slack": 20, "discord": 4, "json": 100}
SCHEMA_VERSION = 1
USER_AGENT = "Lookout-Alerts/1"
SUBJECT_LENGTH = 250
# E-mail parts quoted-printable or base64, whichever is shorter: 7-bit clean for any SMTP server.
_SEVEN_BIT = email.policy.default.clone(cte_type="7bit")
# Discord: the colour of an embed's edge, per rule (red, orange, purple, grey).
COLORS = {"new": 0xE5484D, "regression": 0xF76B15, "spike": 0x8E4EC6, "test": 0x8B8D98,
          "missed": 0xE5484D, "failed": 0xE5484D, "timeout": 0xF76B15, "recovered": 0x30A46C}


def message_key(items: Sequence[AlertItem]) -> str:
    """The message's dedupe key: the SHA-256 (hex) of its alerts' keys, sorted, one per line."""
    return _key([shown(item) for item in items])


def _key(alerts: list[Shown]) -> str:
    return hashlib.sha256("\n".join(sorted(a.key for a in alerts)).encode()).hexdigest()


def signature(secret: str, body: bytes) -> str:
    """`X-Lookout-Signature`: "sha256=" and the hex HMAC-SHA256 of the exact body, keyed with the
    channel's secret (UTF-8)."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_request(channel: Channel, items: Sequence[AlertItem]) -> Outgoing:
    """The request telling a slack, discord or json webhook about `items` (one alert or a digest).
    A json channel's request is signed when the channel has a secret; without one it carries no
    `X-Lookout-Signature` header at all."""
    build = _PAYLOADS.get(channel.kind)
    if build is None:
        raise ValueError(f"A {channel.kind!r} channel takes no webhook request.")
    alerts = _listed(items, channel.kind)
    key = _key(alerts)
    body = json.dumps(build(alerts, key), ensure_ascii=False, separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", "User-Agent": USER_AGENT, "X-Lookout-Delivery": key}
    if channel.kind == "json" and channel.secret:
        headers["X-Lookout-Signature"] = signature(channel.secret, body)
    return Outgoing(body=body, headers=headers)


def email_message(items: Sequence[AlertItem], sender: str, recipient: str) -> EmailMessage:
    """The e-mail telling `recipient` about `items`: a text part and an HTML alternative. Raises
    ValueError when `sender` or `recipient` is not one e-mail address."""
    alerts = _listed(items, "email")
    key = _key(alerts)
    message = EmailMessage(policy=_SEVEN_BIT)
    message["Subject"] = _subject(alerts)
    message["From"] = _address(sender, "sender")
    message["To"] = _address(recipient, "recipient")
    message["Date"] = formatdate(usegmt=True)
    message["Message-ID"] = f"<{key}.alert@{_domain(sender)}>"
    message["X-Lookout-Dedupe-Key"] = key
    message["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation replies to alerts
    message.set_content(_email_text(alerts))
    message.add_alternative(_email_html(alerts), subtype="html")
    return message


def _listed(items: Sequence[AlertItem], kind: str) -> list[Shown]:
    if not 1 <= len(items) <= DIGEST_LIMIT[kind]:
        raise ValueError(f"A {kind} message lists 1 to {DIGEST_LIMIT[kind]} alerts, not {len(items)}.")
    return [shown(item) for item in items]


def _summary(alerts: list[Shown]) -> str:
    if len(alerts) == 1:
        return f"{alerts[0].label} in {alerts[0].project}: {alerts[0].title}"
    return f"{len(alerts)} alerts in {', '.join(sorted({a.project for a in alerts}))}"


# ---- json: the documented schema (README, "Alerts: the JSON webhook") ----


def _json_payload(alerts: list[Shown], key: str) -> dict[str, Any]:
    alerts_json = [_json_alert(a) for a in alerts]
    return {"version": SCHEMA_VERSION, "type": "lookout.alerts", "dedupe_key": key, "alerts": alerts_json}


def _json_alert(a: Shown) -> dict[str, Any]:
    issue = {
        "id": a.issue_id,
        "title": a.title,
        "level": a.level,
        "culprit": a.culprit,
        "first_seen": a.first_seen_iso,
        "last_seen": a.last_seen_iso,
        "event_count": a.event_count,
        "url": a.link,
    }
    return {"dedupe_key": a.key, "rule": a.rule, "reason": a.reason, "project": a.project, "issue": issue,
            "environment": a.environment, "release": a.release}


# ---- slack: Block Kit, mrkdwn with &, <, > escaped (and @ kept from mentioning, for the
# Slack-compatible services that read a bare @channel) ----

_SLACK = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MENTION = re.compile(r"(?<!\w)@")  # @ starting a word ("@channel", not "shop@2.4.1")


def _slack(text: str, units: int) -> str:
    return fit(_MENTION.sub("@\u2060", text), units, lambda c: _SLACK.get(c, c))


def _slack_payload(alerts: list[Shown], key: str) -> dict[str, Any]:
    header = alerts[0].label if len(alerts) == 1 else f"{len(alerts)} alerts"
    blocks: list[dict[str, Any]] = [{"type": "header", "text": {"type": "plain_text", "text": header}}]
    for a in alerts:
        blocks.append(_mrkdwn_section(f"*{_slack(a.title, 200)}*\n{_slack(a.reason, 200)}\n{_slack_link(a)}"))
        fields = [f"*{name}*\n{_slack(value, units)}" for name, value, units in a.facts()]
        blocks.append({"type": "section", "fields": [{"type": "mrkdwn", "text": text} for text in fields]})
    footer = {"type": "mrkdwn", "text": f"Lookout · message {key}"}
    blocks.append({"type": "context", "elements": [footer]})
    lines = [f"• {_slack(a.title, 200)} ({_slack(a.project, 100)}) {_slack_link(a)}" for a in alerts]
    text = "\n".join([_slack(f"Lookout: {_summary(alerts)}", 400), *lines])
    return {"text": text, "blocks": blocks, "unfurl_links": False, "unfurl_media": False}


def _mrkdwn_section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _slack_link(a: Shown) -> str:
    # The web link holds no &, <, > or | (shown.py percent-encodes them): it cannot leave the <…|…>.
    return f"<{a.web_link}|Open in Lookout>" if a.web_link else _slack(a.link, 100)


# ---- discord: one embed per alert, markdown escaped, no mention parsed ----

_MARKDOWN = re.compile(r"[!-/:-@\[-`{-~]")  # ASCII punctuation: a backslash before any shows it as is


def _discord(text: str, units: int) -> str:
    return fit(text, units, lambda c: "\\" + c if _MARKDOWN.match(c) else c)


def _discord_payload(alerts: list[Shown], key: str) -> dict[str, Any]:
    content = f"Lookout: {alerts[0].label}" if len(alerts) == 1 else f"Lookout: {len(alerts)} alerts"
    return {"content": content, "allowed_mentions": {"parse": []}, "embeds": [_embed(a) for a in alerts]}


def _embed(a: Shown) -> dict[str, Any]:
    # Discord refuses an empty title, description or field value: EMPTY stands in.
    description = _discord(a.reason or EMPTY, 200) + ("" if a.web_link else "\n" + _discord(a.link or EMPTY, 100))
    fields = [{"name": name, "value": _discord(value, units), "inline": name != "Culprit"}
              for name, value, units in a.facts() if name != "Dedupe key"]  # the key goes in the footer
    embed: dict[str, Any] = {
        "title": _discord(a.title or EMPTY, 200),
        "description": description,
        "color": COLORS.get(a.rule, COLORS["test"]),
        "fields": fields,
        "footer": {"text": f"Dedupe key {_discord(a.key, 64)}"},
        "timestamp": a.last_seen_iso,
    }
    if a.web_link:
        embed["url"] = a.web_link
    return embed


_PAYLOADS: dict[str, Callable[[list[Shown], str], dict[str, Any]]] = {
    "json": _json_payload,
    "slack": _slack_payload,
    "discord": _discord_payload,
}


# ---- e-mail ----


def _subject(alerts: list[Shown]) -> str:
    return fit(f"[Lookout] {_summary(alerts)}", SUBJECT_LENGTH)


def _address(text: str, role: str) -> Address:
    """One address ("a@example.com" or "Name <a@example.com>"); never a second one, nor a line break."""
    found = getaddresses([text]) if text.isprintable() and len(text) <= 320 else []
    try:
        if len(found) == 1 and "@" in found[0][1]:
            return Address(display_name=found[0][0], addr_spec=found[0][1])
    except (ValueError, IndexError):
        pass
    raise ValueError(f"The {role} {text[:320]!r} is not an e-mail address.")


def _domain(sender: str) -> str:
    """The right side of a Message-ID: the sender's domain when it is plain ASCII."""
    domain = _address(sender, "sender").domain
    return domain if re.fullmatch(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*", domain) else "lookout.invalid"


def _email_text(alerts: list[Shown]) -> str:
    parts = [f"Lookout: {_summary(alerts)}"] if len(alerts) > 1 else []
    for a in alerts:
        facts = [f"{name + ':':<13} {value}" for name, value, _ in a.facts()]
        page = f"{'Monitors:' if a.rule in MONITOR_RULES else 'Issue page:':<13} {a.link or EMPTY}"
        parts.append("\n".join([f"{a.label} in {a.project}: {a.title}", a.reason, "", *facts, page]))
    return "\n\n".join(parts) + "\n"


def _email_html(alerts: list[Shown]) -> str:
    def e(text: str) -> str:
        return html.escape(text or EMPTY, quote=True)

    parts = ['<!doctype html><html><body style="font-family:sans-serif">']
    if len(alerts) > 1:
        parts.append(f"<p>Lookout: {e(_summary(alerts))}</p>")
    for a in alerts:
        rows = "".join(f'<tr><th align="left">{name}</th><td>{e(value)}</td></tr>' for name, value, _ in a.facts())
        what = "the monitors" if a.rule in MONITOR_RULES else "the issue"
        page = f'<a href="{e(a.web_link)}">Open {what} in Lookout</a>' if a.web_link else f"Issue page: {e(a.link)}"
        heading = f"<h2>{a.label} in {e(a.project)}: {e(a.title)}</h2><p>{e(a.reason)}</p>"
        parts.append(f"{heading}<table>{rows}</table><p>{page}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


# ---- a cron monitor's alert: its title and reason (app/monitors/states.py) ----


def monitor_title(slug: str, state: str) -> str:
    """A monitor alert's title: "Monitor nightly-report: missed"."""
    return f"Monitor {slug}: {state}"


def monitor_reason(rule: str, slug: str, at: float, detail: str = "") -> str:
    """Why a monitor alerted, naming it, its state and when (UTC): `rule` one of MONITOR_RULES; `at`
    the deadline it missed, the start of the run that failed or overran, or the ok check-in's time;
    `detail` what the sentence adds (the margin, the runtime, the state it recovered from)."""
    when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if rule == "missed":
        return f"The monitor {slug} missed its check-in expected at {when}{detail}."
    if rule == "failed":
        return f"The monitor {slug} checked in with an error at {when}."
    if rule == "timeout":
        return f"The monitor {slug}'s run that started at {when} is still in progress{detail}."
    return f"The monitor {slug} checked in ok at {when}{detail}."
