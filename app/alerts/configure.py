"""What maintainers change on the /alerts page: channels (add, remove, switch on or off, test) and
each project's rules; and the channels as anyone allowed to see the console may see them.

A channel's target is shown masked: a webhook's URL is itself a secret (whoever has a Slack or
Discord URL can post to it), so only `scheme://host/…` and its last 4 characters show; an e-mail
address shows whole. A json webhook's secret is never shown back ("set" or "none"), except the one
made here when the maintainer gave none, returned once by `add_channel`.

Channels from the environment (LOOKOUT_ALERT_EMAILS, LOOKOUT_ALERT_WEBHOOKS) are rebuilt from it at
each start (app/alerts/channels.py): the console cannot remove them (a restart would bring them
back), but can switch them off and on (silencing a noisy channel needs no restart; a restart keeps
the switch) and test them. Every refusal is a ValueError whose message is a sentence.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

import sqlalchemy
from sqlalchemy import delete, func, insert, select, update

from app.alerts import rules as alert_rules, triggers
from app.alerts.alert import WEBHOOK_KINDS, cut_error
from app.alerts.channels import SECRET_MAX, channel_problem
from app.alerts.tables import CHANNELS, DELIVERIES
from app.projects.tables import PROJECTS
from app.protocol.fields import UNSTORABLE

TARGET_MAX = 2048  # characters of a webhook URL or an address (a longer one is refused, never cut)
MAX_CHANNELS = 100  # channels made in the console; the environment's come on top
MAX_LISTED = 1000  # channels listed, the environment's included
MAX_PROJECTS = 1000  # projects listed for the choice of scope and of rules
TAIL = 4  # characters shown at the end of a masked webhook URL
FROM_ENV = ("This channel comes from LOOKOUT_ALERT_EMAILS or LOOKOUT_ALERT_WEBHOOKS: remove it there and "
            "restart, or switch it off here.")
NO_CHANNEL = "There is no such channel."
NO_MAIL = ("This server cannot send e-mail: set LOOKOUT_SMTP_URL and LOOKOUT_ALERT_FROM in its environment "
           "and restart it, then add the address.")
NO_PROJECT = "There is no such project."


@dataclass(frozen=True)
class ChannelView:
    """A channel as the page shows it: nothing here is secret."""

    id: int
    kind: str
    target: str  # masked for a webhook
    secret: str  # "set" or "none"
    project_id: int | None  # None: every project
    origin: str  # console or env
    enabled: bool
    last_delivery_at: float | None
    last_error: str  # at most 1 KB, with the channel's own URL masked
    last_error_at: float | None


@dataclass(frozen=True)
class Added:
    id: int
    secret_once: str  # the secret made for a json channel given none, to show once; else ""


def masked(kind: str, target: str) -> str:
    """A webhook URL as `scheme://host[:port]/…` and its last 4 characters (none of a short path);
    an e-mail address whole. User and password in a URL never show."""
    if kind not in WEBHOOK_KINDS:
        return target
    try:
        parts = urlsplit(target)
        host, port = parts.hostname, parts.port
    except ValueError:
        return "…"
    if not parts.scheme or not host:
        return "…"
    shown = f"[{host}]" if ":" in host else host
    rest = parts.path + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")
    tail = rest[-TAIL:] if len(rest) >= 3 * TAIL else ""
    return f"{parts.scheme}://{shown}{'' if port is None else f':{port}'}/…{tail}"


def channel_views(connection: sqlalchemy.Connection) -> list[ChannelView]:
    """Every channel, oldest first (the console's at most MAX_CHANNELS, plus the environment's)."""
    rows = connection.execute(select(CHANNELS).order_by(CHANNELS.c.id).limit(MAX_LISTED)).mappings()
    return [_view(row) for row in rows]


def _view(row: sqlalchemy.RowMapping) -> ChannelView:
    target = masked(row["kind"], row["target"])
    # A failure's text may quote the URL it failed on: it shows masked there too.
    error = row["last_error"].replace(row["target"], target) if row["target"] else row["last_error"]
    return ChannelView(
        id=row["id"], kind=row["kind"], target=target, secret="set" if row["secret"] else "none",
        project_id=row["project_id"], origin=row["origin"], enabled=bool(row["enabled"]),
        last_delivery_at=row["last_delivery_at"], last_error=cut_error(error), last_error_at=row["last_error_at"],
    )


def project_names(connection: sqlalchemy.Connection) -> dict[int, str]:
    """The projects alerts can be scoped to, by id (at most MAX_PROJECTS, lowest ids first)."""
    rows = connection.execute(select(PROJECTS.c.id, PROJECTS.c.name).order_by(PROJECTS.c.id).limit(MAX_PROJECTS))
    return {row.id: row.name for row in rows}


def add_channel(connection: sqlalchemy.Connection, kind: str, target: str, secret: str,
                project_id: int | None, now: float, can_mail: bool = True) -> Added:
    """A new console channel, checked (channels.channel_problem); a json channel given no secret
    gets a random one, returned once in `Added.secret_once`. `can_mail`: whether this server can send
    e-mail (LOOKOUT_SMTP_URL and LOOKOUT_ALERT_FROM set); if not, an e-mail channel is refused."""
    if kind == "email" and not can_mail:
        raise ValueError(NO_MAIL)
    target, secret = target.strip(), secret.strip()
    if len(target) > TARGET_MAX:
        raise ValueError(f"The target must be at most {TARGET_MAX} characters.")
    if len(secret) > SECRET_MAX:
        raise ValueError(f"The secret must be at most {SECRET_MAX} characters.")
    if UNSTORABLE.search(target) or UNSTORABLE.search(secret):
        raise ValueError("The target and the secret must be plain text, without NUL characters.")
    if secret and kind != "json":
        raise ValueError("Only a json webhook has a secret.")
    problem = channel_problem(kind, target, secret)
    if problem is not None:
        raise ValueError(problem)
    if project_id is not None:
        _project(connection, project_id)
    made = secrets.token_hex(32) if kind == "json" and not secret else ""
    ours = CHANNELS.c.origin == "console"
    if connection.execute(select(func.count()).select_from(CHANNELS).where(ours)).scalar_one() >= MAX_CHANNELS:
        raise ValueError(f"There are {MAX_CHANNELS} channels already: remove one first.")
    same = (CHANNELS.c.kind == kind) & (CHANNELS.c.target == target) & (
        CHANNELS.c.project_id.is_(None) if project_id is None else CHANNELS.c.project_id == project_id)
    if connection.execute(select(CHANNELS.c.id).where(same).limit(1)).first() is not None:
        raise ValueError("That channel exists already.")
    channel_id = connection.execute(insert(CHANNELS).values(
        kind=kind, target=target, secret=secret or made, project_id=project_id, origin="console",
        enabled=True, created_at=now, last_error="",
    ).returning(CHANNELS.c.id)).scalar_one()
    return Added(channel_id, made)


def remove_channel(connection: sqlalchemy.Connection, channel_id: int) -> None:
    """Remove a console channel, and what it still had to send (the alerts stay for the others)."""
    row = connection.execute(select(CHANNELS.c.origin).where(CHANNELS.c.id == channel_id)).first()
    if row is None:
        raise ValueError(NO_CHANNEL)
    if row.origin != "console":
        raise ValueError(FROM_ENV)
    connection.execute(delete(DELIVERIES).where(DELIVERIES.c.channel_id == channel_id))
    connection.execute(delete(CHANNELS).where(CHANNELS.c.id == channel_id))


def switch_channel(connection: sqlalchemy.Connection, channel_id: int, enabled: bool) -> None:
    """Switch a channel on or off, the environment's too. Off: no new alert fans out to it, and what
    it still had to send waits until it is on again (app/alerts/sender.py)."""
    if connection.execute(update(CHANNELS).where(CHANNELS.c.id == channel_id).values(enabled=enabled)).rowcount == 0:
        raise ValueError(NO_CHANNEL)


def queue_test(connection: sqlalchemy.Connection, channel_id: int, now: float) -> str:
    """Queue a test alert for one channel (the sender delivers it); its dedupe key."""
    row = connection.execute(select(CHANNELS.c.enabled).where(CHANNELS.c.id == channel_id)).first()
    if row is None:
        raise ValueError(NO_CHANNEL)
    if not row.enabled:
        raise ValueError("This channel is switched off: switch it on to test it.")
    return triggers.queue_test_alert(connection, channel_id, now)


def read_rules(connection: sqlalchemy.Connection, project_id: int) -> alert_rules.Rules:
    _project(connection, project_id)
    return alert_rules.read(connection, project_id)


def save_rules(connection: sqlalchemy.Connection, project_id: int, rules: alert_rules.Rules) -> None:
    """Save a project's rules (ValueError with a sentence when a number is out of bounds)."""
    _project(connection, project_id)
    alert_rules.save(connection, project_id, rules.checked())


def _project(connection: sqlalchemy.Connection, project_id: int) -> None:
    if connection.execute(select(PROJECTS.c.id).where(PROJECTS.c.id == project_id)).first() is None:
        raise ValueError(NO_PROJECT)
