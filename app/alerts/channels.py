"""Alert channels: which are valid, the ones the environment names, which apply to a project, and
how their last send went.

A channel is a row of `alert_channel`: an e-mail address or a webhook URL (slack, discord, json).
Maintainers add channels on the /alerts page (app/alerts/configure.py); headless set-ups name them
in LOOKOUT_ALERT_EMAILS and LOOKOUT_ALERT_WEBHOOKS, which `sync_env_channels` turns into rows of
origin "env" at each start: exactly the environment's, matched by kind and target, so that a
channel's id and last delivery survive a restart.
"""

from __future__ import annotations

import time

import sqlalchemy
from sqlalchemy import delete, insert, or_, select, update

from app.alerts import mail, outbound
from app.alerts.alert import KINDS, WEBHOOK_KINDS, Channel, Delivered, cut_error
from app.alerts.tables import CHANNELS, DELIVERIES
from app.settings import Settings
from reflex_lookout.background import Lease
from reflex_lookout.settings_error import SettingsError

ADDRESS_MAX = 254  # an e-mail address's longest form (RFC 5321 path limit)
SECRET_MAX = 256  # a json webhook's HMAC key, at most this many characters
SECRET_MARK = "#secret="  # LOOKOUT_ALERT_WEBHOOKS: a json entry's URL may end with this and its secret
SYNC_WAIT_S = 15.0  # how long a start waits for another worker's sync (longer than a lease's TTL)

EnvChannel = tuple[str, str, str]  # (kind, target, secret)


def channel_problem(kind: str, target: str, secret: str = "") -> str | None:
    """What is wrong with a channel (a sentence), or None when it can be used."""
    if kind not in KINDS:
        return f"The channel kind must be one of {', '.join(KINDS)}."
    if len(secret) > SECRET_MAX:
        return f"The secret must be at most {SECRET_MAX} characters."
    if kind in WEBHOOK_KINDS:
        return outbound.url_problem(target)
    return address_problem(target)


def address_problem(address: str) -> str | None:
    """What is wrong with one bare e-mail address (a sentence), or None."""
    if not address:
        return "The e-mail address is empty."
    if len(address) > ADDRESS_MAX:
        return f"The e-mail address must be at most {ADDRESS_MAX} characters."
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in address):
        return "The e-mail address must not contain spaces or control characters."
    local, _, domain = address.partition("@")
    if not local or not domain or "@" in domain:
        return "The e-mail address must have the form name@domain."
    if any(c in address for c in "<>,;\"()[]\\"):
        return "The e-mail address must be a bare address such as ops@example.com."
    return None


def env_channels(settings: Settings) -> list[EnvChannel]:
    """The channels LOOKOUT_ALERT_EMAILS and LOOKOUT_ALERT_WEBHOOKS name, each once, checked along
    with the settings they need; SettingsError (a sentence) for the first that cannot be used."""
    found: list[EnvChannel] = []
    for address in settings.alert_emails:
        if problem := address_problem(address):
            raise SettingsError(f"LOOKOUT_ALERT_EMAILS {address[:ADDRESS_MAX]!r}: {problem}")
        found.append(("email", address, ""))
    for number, entry in enumerate(settings.alert_webhooks, 1):
        found.append(_webhook_entry(number, entry))
    _check_settings(settings, needs_mail=bool(settings.alert_emails))
    return list(dict.fromkeys(found))


def _webhook_entry(number: int, entry: str) -> EnvChannel:
    """One `kind=url` entry of LOOKOUT_ALERT_WEBHOOKS. Its URL is not repeated in an error: a Slack
    or Discord webhook's URL is itself a secret, and start-up errors end up in logs."""
    where = f"LOOKOUT_ALERT_WEBHOOKS entry {number}"
    kind, equals, url = entry.partition("=")
    kind = kind.strip().lower()
    if not equals or kind not in WEBHOOK_KINDS:
        raise SettingsError(f"{where} must be kind=url, with kind one of {', '.join(WEBHOOK_KINDS)}.")
    url, mark, secret = url.strip().partition(SECRET_MARK)
    if mark and kind != "json":
        raise SettingsError(f"{where}: only a json webhook takes a {SECRET_MARK}... part.")
    if kind == "json" and not secret:
        raise SettingsError(f"{where}: a json webhook's URL must end with {SECRET_MARK}<secret>, the key its "
                            "requests are signed with.")
    if problem := channel_problem(kind, url, secret):
        raise SettingsError(f"{where} ({kind}): {problem}")
    return kind, url, secret


def _check_settings(settings: Settings, needs_mail: bool) -> None:
    """LOOKOUT_SMTP_URL, LOOKOUT_ALERT_FROM and LOOKOUT_WEBHOOK_ALLOW, as the sender will use them."""
    if settings.smtp_url:
        try:
            mail.SmtpServer.from_url(settings.smtp_url)
        except ValueError as exc:
            raise SettingsError(f"LOOKOUT_SMTP_URL: {exc}") from exc
    elif needs_mail:
        raise SettingsError("LOOKOUT_ALERT_EMAILS needs LOOKOUT_SMTP_URL, the SMTP server e-mail goes through.")
    if settings.alert_from:
        if problem := address_problem(settings.alert_from):
            raise SettingsError(f"LOOKOUT_ALERT_FROM: {problem}")
    elif needs_mail:
        raise SettingsError("LOOKOUT_ALERT_EMAILS needs LOOKOUT_ALERT_FROM, the address alerts are sent from.")
    try:
        outbound.OutboundPolicy.from_entries(settings.webhook_allow)
    except ValueError as exc:
        raise SettingsError(f"LOOKOUT_WEBHOOK_ALLOW: {exc}") from exc


def sync_env_channels(engine: sqlalchemy.Engine, settings: Settings) -> None:
    """Make the rows of origin "env" exactly the environment's channels (each for every project).
    A row keeps its id, its last delivery and whether the console switched it off; a row the
    environment no longer names is removed with its pending deliveries (there is nowhere to send
    them). Workers starting together take turns through a lease, so none inserts a channel twice."""
    wanted = env_channels(settings)
    lease = Lease(engine, "alert-channels")
    deadline = time.monotonic() + SYNC_WAIT_S
    while not lease.hold():
        if time.monotonic() > deadline:
            raise RuntimeError("Another worker kept the alert channels' lease; the environment's channels "
                               "were not synchronised.")
        time.sleep(0.1)
    try:
        with engine.begin() as connection:
            _sync(connection, wanted, time.time())
    finally:
        lease.release()


def _sync(connection: sqlalchemy.Connection, wanted: list[EnvChannel], now: float) -> None:
    rows = connection.execute(select(CHANNELS.c.id, CHANNELS.c.kind, CHANNELS.c.target)
                              .where(CHANNELS.c.origin == "env")).all()
    have = {(kind, target): row_id for row_id, kind, target in rows}
    for kind, target, secret in wanted:
        row_id = have.pop((kind, target), None)
        if row_id is None:
            connection.execute(insert(CHANNELS).values(kind=kind, target=target, secret=secret, origin="env",
                                                       project_id=None, enabled=True, created_at=now,
                                                       last_error=""))
        else:
            connection.execute(update(CHANNELS).where(CHANNELS.c.id == row_id)
                               .values(secret=secret, project_id=None))
    gone = list(have.values())
    if gone:
        connection.execute(delete(DELIVERIES).where(DELIVERIES.c.channel_id.in_(gone)))
        connection.execute(delete(CHANNELS).where(CHANNELS.c.id.in_(gone)))


COLUMNS = (CHANNELS.c.id, CHANNELS.c.kind, CHANNELS.c.target, CHANNELS.c.secret, CHANNELS.c.project_id,
           CHANNELS.c.origin, CHANNELS.c.enabled)


def from_row(row: sqlalchemy.Row) -> Channel:
    return Channel(id=row.id, kind=row.kind, target=row.target, secret=row.secret, project_id=row.project_id,
                   origin=row.origin, enabled=row.enabled)


def channels_for(connection: sqlalchemy.Connection, project_id: int) -> list[Channel]:
    """The enabled channels that alerts of `project_id` go to: its own and those of every project."""
    query = (select(*COLUMNS)
             .where(CHANNELS.c.enabled, or_(CHANNELS.c.project_id.is_(None), CHANNELS.c.project_id == project_id))
             .order_by(CHANNELS.c.id))
    return [from_row(row) for row in connection.execute(query)]


def channel(connection: sqlalchemy.Connection, channel_id: int) -> Channel | None:
    """The channel `channel_id` (enabled or not), or None when there is no such channel."""
    row = connection.execute(select(*COLUMNS).where(CHANNELS.c.id == channel_id)).first()
    return None if row is None else from_row(row)


def record_delivery(connection: sqlalchemy.Connection, channel_id: int, delivered: Delivered, now: float) -> None:
    """Note how a send to the channel went, for the /alerts page: its time when it went through;
    else the error (at most 1 KB of it) and its time. Each keeps its latest: a page can show both."""
    values = ({"last_delivery_at": now} if delivered.ok
              else {"last_error": cut_error(delivered.error or "The send failed."), "last_error_at": now})
    connection.execute(update(CHANNELS).where(CHANNELS.c.id == channel_id).values(**values))
