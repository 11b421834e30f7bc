"""app/alerts/channels.py: channel checks, the environment's channels and their rows, which channels a
project's alerts go to, and each channel's last delivery and error (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
import sqlalchemy
from sqlalchemy import insert, select, update

from app import db
from app.alerts import channels
from app.alerts.alert import ERROR_BYTES, Delivered
from app.settings import Settings
from plugin_support.concurrency import all_at_once
from reflex_lookout.settings_error import SettingsError

CHANNELS = channels.CHANNELS
DELIVERIES = channels.DELIVERIES
SLACK_URL = "https://hooks.slack.example.com/services/T000/B000/SECRETPART"
MAIL = {"LOOKOUT_SMTP_URL": "smtp://mail.example.com:25", "LOOKOUT_ALERT_FROM": "lookout@example.com"}


@pytest.fixture
def engine(database_url: str) -> sqlalchemy.Engine:
    eng = db.engine(database_url)
    db.migrate(eng)
    return eng


def settings(**env: str) -> Settings:
    return Settings.from_env({key.upper(): value for key, value in env.items()})


def env_rows(engine: sqlalchemy.Engine) -> list[sqlalchemy.Row]:
    with engine.connect() as connection:
        return connection.execute(select(CHANNELS).where(CHANNELS.c.origin == "env").order_by(CHANNELS.c.id)).all()


def console_channel(engine: sqlalchemy.Engine, kind: str, target: str, project_id: int | None = None,
                    enabled: bool = True) -> int:
    with engine.begin() as connection:
        return connection.execute(insert(CHANNELS).values(
            kind=kind, target=target, secret="", origin="console", project_id=project_id, enabled=enabled,
            created_at=1.0, last_error="").returning(CHANNELS.c.id)).scalar_one()


# --- channel_problem ------------------------------------------------------------------------------


@pytest.mark.parametrize("address", ["ops@example.com", "a.b+alerts@sub.example.org", "x@y"])
def test_an_address_is_a_channel(address: str) -> None:
    assert channels.channel_problem("email", address) is None


@pytest.mark.parametrize(("address", "words"), [
    ("", "empty"),
    ("ops@example.com\r\nBcc: all@example.com", "spaces or control"),
    ("ops @example.com", "spaces or control"),
    ("ops\x00@example.com", "control"),
    ("ops.example.com", "name@domain"),
    ("ops@a@example.com", "name@domain"),
    ("@example.com", "name@domain"),
    ("Ops <ops@example.com>", "spaces"),
    ("<ops@example.com>", "bare address"),
    ("a,b@example.com", "bare address"),
    ("a" * 250 + "@example.com", "at most 254"),
])
def test_a_bad_address_is_refused_with_a_sentence(address: str, words: str) -> None:
    problem = channels.channel_problem("email", address)
    assert problem is not None and words in problem and problem.endswith(".")


def test_a_webhook_is_checked_as_an_outbound_url() -> None:
    assert channels.channel_problem("slack", SLACK_URL) is None
    assert channels.channel_problem("json", "https://example.com/hook", "s" * 256) is None
    for url in ("ftp://example.com/hook", "https://user:pw@example.com/hook", "not a url", ""):
        problem = channels.channel_problem("discord", url)
        assert problem is not None and problem.endswith(".")


def test_an_unknown_kind_or_a_long_secret_is_refused() -> None:
    assert channels.channel_problem("sms", "+15551234") == "The channel kind must be one of email, slack, discord, json."
    assert "at most 256" in (channels.channel_problem("json", "https://example.com/hook", "s" * 257) or "")


# --- env_channels ---------------------------------------------------------------------------------


def test_the_environment_names_addresses_and_webhooks() -> None:
    found = channels.env_channels(settings(
        lookout_alert_emails="ops@example.com, dev@example.com ops@example.com",
        lookout_alert_webhooks=f"slack={SLACK_URL}, discord=https://discord.example.com/api/webhooks/1/x,"
                               "json=https://example.com/hook#secret=s3cret#with=signs",
        **{k.lower(): v for k, v in MAIL.items()}))
    assert found == [
        ("email", "ops@example.com", ""), ("email", "dev@example.com", ""),
        ("slack", SLACK_URL, ""), ("discord", "https://discord.example.com/api/webhooks/1/x", ""),
        ("json", "https://example.com/hook", "s3cret#with=signs"),
    ]


def test_no_alert_settings_name_no_channel() -> None:
    assert channels.env_channels(settings()) == []


@pytest.mark.parametrize(("env", "sentence"), [
    ({"lookout_alert_webhooks": f"teams={SLACK_URL}"},
     "LOOKOUT_ALERT_WEBHOOKS entry 1 must be kind=url, with kind one of slack, discord, json."),
    ({"lookout_alert_webhooks": f"json=https://example.com/a#secret=k,{SLACK_URL}"},
     "LOOKOUT_ALERT_WEBHOOKS entry 2 must be kind=url, with kind one of slack, discord, json."),
    ({"lookout_alert_webhooks": f"slack={SLACK_URL}#secret=abc"},
     "LOOKOUT_ALERT_WEBHOOKS entry 1: only a json webhook takes a #secret=... part."),
    ({"lookout_alert_webhooks": "json=https://example.com/hook"},
     "LOOKOUT_ALERT_WEBHOOKS entry 1: a json webhook's URL must end with #secret=<secret>, the key its "
     "requests are signed with."),
    ({"lookout_alert_emails": "ops@example.com", "lookout_alert_from": "lookout@example.com"},
     "LOOKOUT_ALERT_EMAILS needs LOOKOUT_SMTP_URL, the SMTP server e-mail goes through."),
    ({"lookout_alert_emails": "ops@example.com", "lookout_smtp_url": "smtp://mail.example.com"},
     "LOOKOUT_ALERT_EMAILS needs LOOKOUT_ALERT_FROM, the address alerts are sent from."),
])
def test_a_bad_entry_is_a_settings_error_sentence(env: dict[str, str], sentence: str) -> None:
    with pytest.raises(SettingsError) as raised:
        channels.env_channels(settings(**env))
    assert str(raised.value) == sentence


@pytest.mark.parametrize(("env", "start"), [
    ({"lookout_alert_webhooks": "slack=ftp://hooks.example.com/SECRETPART"}, "LOOKOUT_ALERT_WEBHOOKS entry 1 (slack): "),
    ({"lookout_alert_emails": "ops@@example.com", **{k.lower(): v for k, v in MAIL.items()}},
     "LOOKOUT_ALERT_EMAILS 'ops@@example.com': The e-mail address must have the form name@domain."),
    ({"lookout_smtp_url": "http://mail.example.com"}, "LOOKOUT_SMTP_URL: "),
    ({"lookout_alert_from": "Lookout"}, "LOOKOUT_ALERT_FROM: The e-mail address must have the form name@domain."),
    ({"lookout_webhook_allow": "10.0.0.0/33"}, "LOOKOUT_WEBHOOK_ALLOW: "),
])
def test_bad_alert_settings_are_named_in_the_sentence(env: dict[str, str], start: str) -> None:
    with pytest.raises(SettingsError) as raised:
        channels.env_channels(settings(**env))
    message = str(raised.value)
    if start.endswith("."):  # the whole sentence
        assert message == start
    else:  # the variable's name, then the sentence of the module that checked it
        assert message.startswith(start) and message.endswith(".") and len(message) > len(start) + 10


def test_an_entrys_error_does_not_repeat_a_webhooks_url() -> None:
    """A Slack or Discord webhook's URL is its secret; start-up errors go to logs."""
    for entry in (f"teams={SLACK_URL}", f"slack={SLACK_URL}#secret=x", "json=https://example.com/SECRETPART"):
        with pytest.raises(SettingsError) as raised:
            channels.env_channels(settings(lookout_alert_webhooks=entry))
        assert "SECRETPART" not in str(raised.value)


# --- sync_env_channels ----------------------------------------------------------------------------


def test_the_environments_channels_become_rows_for_every_project(engine: sqlalchemy.Engine) -> None:
    channels.sync_env_channels(engine, settings(lookout_alert_webhooks=f"slack={SLACK_URL},"
                                                "json=https://example.com/hook#secret=k1"))
    rows = env_rows(engine)
    assert [(r.kind, r.target, r.secret, r.project_id, r.enabled) for r in rows] == [
        ("slack", SLACK_URL, "", None, True), ("json", "https://example.com/hook", "k1", None, True)]


def test_a_restart_keeps_ids_and_last_delivery_and_follows_the_environment(engine: sqlalchemy.Engine) -> None:
    console = console_channel(engine, "slack", SLACK_URL)
    channels.sync_env_channels(engine, settings(lookout_alert_webhooks=f"slack={SLACK_URL},"
                                                "json=https://example.com/hook#secret=k1"))
    slack, json_ = env_rows(engine)
    with engine.begin() as connection:
        channels.record_delivery(connection, slack.id, Delivered(ok=True), 1234.0)
        connection.execute(insert(DELIVERIES).values(alert_id=1, channel_id=slack.id, next_attempt_at=0.0))
        connection.execute(insert(DELIVERIES).values(alert_id=1, channel_id=json_.id, next_attempt_at=0.0))

    # The same environment, the json secret changed: nothing else moves.
    channels.sync_env_channels(engine, settings(lookout_alert_webhooks=f"slack={SLACK_URL},"
                                                "json=https://example.com/hook#secret=k2"))
    assert [(r.id, r.secret, r.last_delivery_at) for r in env_rows(engine)] == [
        (slack.id, "", 1234.0), (json_.id, "k2", None)]

    # The slack entry is gone: its row goes, with what it still had to send; the console's stays.
    channels.sync_env_channels(engine, settings(lookout_alert_webhooks="json=https://example.com/hook#secret=k2"))
    assert [r.id for r in env_rows(engine)] == [json_.id]
    with engine.connect() as connection:
        assert connection.execute(select(DELIVERIES.c.channel_id)).scalars().all() == [json_.id]
        assert connection.execute(select(CHANNELS.c.id).where(CHANNELS.c.origin == "console")).scalars().all() == [
            console]


def test_a_bad_environment_changes_no_row(engine: sqlalchemy.Engine) -> None:
    channels.sync_env_channels(engine, settings(lookout_alert_webhooks=f"slack={SLACK_URL}"))
    with pytest.raises(SettingsError):
        channels.sync_env_channels(engine, settings(lookout_alert_webhooks="slack=ftp://example.com/"))
    assert [r.target for r in env_rows(engine)] == [SLACK_URL]


def test_workers_starting_together_make_each_channel_once(engine: sqlalchemy.Engine) -> None:
    config = settings(lookout_alert_webhooks=",".join(f"slack=https://hooks.example.com/{n}" for n in range(20)))
    assert all_at_once(lambda: channels.sync_env_channels(engine, config)) == []
    assert sorted(r.target for r in env_rows(engine)) == sorted(f"https://hooks.example.com/{n}" for n in range(20))


# --- channels_for, channel, record_delivery -------------------------------------------------------


def test_a_projects_alerts_go_to_its_enabled_channels_and_every_projects(engine: sqlalchemy.Engine) -> None:
    everywhere = console_channel(engine, "email", "all@example.com")
    mine = console_channel(engine, "email", "one@example.com", project_id=1)
    console_channel(engine, "email", "two@example.com", project_id=2)
    off = console_channel(engine, "email", "off@example.com", enabled=False)
    with engine.connect() as connection:
        assert [c.id for c in channels.channels_for(connection, 1)] == [everywhere, mine]
        assert [c.target for c in channels.channels_for(connection, 3)] == ["all@example.com"]
        found = channels.channel(connection, off)
        assert found is not None and not found.enabled and found.kind == "email"
        assert channels.channel(connection, 999) is None


def test_a_send_is_recorded_and_an_error_kept_to_1_kb(engine: sqlalchemy.Engine) -> None:
    channel_id = console_channel(engine, "slack", SLACK_URL)
    with engine.begin() as connection:
        channels.record_delivery(connection, channel_id, Delivered(ok=False, error="é" * 5000, status=500), 10.0)
        channels.record_delivery(connection, channel_id, Delivered(ok=True, status=200), 20.0)
    with engine.connect() as connection:
        row = connection.execute(select(CHANNELS).where(CHANNELS.c.id == channel_id)).one()
    assert (row.last_delivery_at, row.last_error_at) == (20.0, 10.0)
    assert row.last_error == "é" * (ERROR_BYTES // 2) and len(row.last_error.encode()) <= ERROR_BYTES


def test_an_error_without_words_is_still_a_sentence(engine: sqlalchemy.Engine) -> None:
    channel_id = console_channel(engine, "slack", SLACK_URL)
    with engine.begin() as connection:
        connection.execute(update(CHANNELS).values(last_error="old"))
        channels.record_delivery(connection, channel_id, Delivered(ok=False), 5.0)
        row = connection.execute(select(CHANNELS.c.last_error, CHANNELS.c.last_delivery_at)).one()
    assert tuple(row) == ("The send failed.", None)
