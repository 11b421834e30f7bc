"""Maintainers' changes to alerts, on SQLite and PostgreSQL: channels are checked before they are
stored, listed masked (a webhook URL is a secret; a json secret is never shown back, except the one
made for it, once), the environment's cannot be removed (but are switched), a removed channel's
pending sends go with it, a test alert is queued for one channel, and rules are per project."""

from __future__ import annotations

import pytest
import sqlalchemy
from sqlalchemy import insert, select

from app import db
from app.alerts import configure
from app.alerts.alert import ERROR_BYTES
from app.alerts.configure import CHANNELS, DELIVERIES, masked
from app.alerts.models import Alert
from app.alerts.rules import Rules
from app.ingest.store import InboxStore
from app.projects.registry import Projects
from reflex_lookout.dsn import Dsn
from tests.environment import LOCAL_DSN

SLACK = "https://hooks.slack.com/services/T000/B000/abcdefghWXYZ"
ALERTS = Alert.__table__
NOW = 1_700_000_000.0


@pytest.fixture
def engine(database_url: str) -> sqlalchemy.Engine:
    """A migrated database with two projects: 1 (the tests' local DSN) and 2 "Billing"."""
    eng = db.engine(database_url)
    db.migrate(eng)
    InboxStore(eng).ensure_project(Dsn.parse(LOCAL_DSN))
    Projects(eng).add("Billing")
    return eng


def change(engine: sqlalchemy.Engine, work, *args):  # any configure function
    with engine.begin() as connection:
        return work(connection, *args)


def add(engine: sqlalchemy.Engine, kind: str, target: str, secret: str = "", project_id: int | None = None) -> configure.Added:
    return change(engine, configure.add_channel, kind, target, secret, project_id, NOW)


def views(engine: sqlalchemy.Engine) -> dict[int, configure.ChannelView]:
    return {view.id: view for view in change(engine, configure.channel_views)}


def env_channel(engine: sqlalchemy.Engine, kind: str = "slack", target: str = SLACK) -> int:
    """A channel as app/alerts/channels.py writes the environment's."""
    with engine.begin() as connection:
        return connection.execute(insert(CHANNELS).values(
            kind=kind, target=target, secret="", project_id=None, origin="env", enabled=True, created_at=NOW,
            last_error="").returning(CHANNELS.c.id)).scalar_one()


def stored(engine: sqlalchemy.Engine, channel_id: int) -> dict:
    with engine.connect() as connection:
        row = connection.execute(select(CHANNELS).where(CHANNELS.c.id == channel_id)).mappings().first()
    return dict(row) if row is not None else {}


@pytest.mark.parametrize(("kind", "target", "shown"), [
    ("slack", SLACK, "https://hooks.slack.com/…WXYZ"),
    ("discord", "https://discord.com/api/webhooks/1234/token-ABCD?wait=true", "https://discord.com/…true"),
    ("json", "http://127.0.0.1:8123/hook", "http://127.0.0.1:8123/…"),  # a short path shows nothing of itself
    ("json", "http://[::1]:9000/hooks/abcdefghijkl", "http://[::1]:9000/…ijkl"),
    ("json", "https://user:password@example.com/a-long-path-here", "https://example.com/…here"),
    ("json", "http://[::1", "…"),
    ("json", "no scheme at all", "…"),
    ("email", "ops@example.com", "ops@example.com"),
])
def test_a_target_is_masked_but_an_address(kind: str, target: str, shown: str) -> None:
    assert masked(kind, target) == shown


def test_an_email_channel_is_added_and_listed_whole(engine: sqlalchemy.Engine) -> None:
    added = add(engine, "email", "  ops@example.com ")
    assert added.secret_once == ""
    view = views(engine)[added.id]
    assert (view.kind, view.target, view.secret, view.project_id, view.origin, view.enabled) == (
        "email", "ops@example.com", "none", None, "console", True)
    assert (view.last_delivery_at, view.last_error, view.last_error_at) == (None, "", None)


def test_an_email_channel_is_refused_where_the_server_cannot_send_mail(engine: sqlalchemy.Engine) -> None:
    with pytest.raises(ValueError, match="cannot send e-mail: set LOOKOUT_SMTP_URL and LOOKOUT_ALERT_FROM"):
        change(engine, configure.add_channel, "email", "ops@example.com", "", None, NOW, False)
    assert views(engine) == {}
    change(engine, configure.add_channel, "json", "https://hooks.example.com/a/b", "", None, NOW, False)  # webhooks still
    assert [view.kind for view in views(engine).values()] == ["json"]


def test_a_json_channel_given_no_secret_gets_one_shown_once(engine: sqlalchemy.Engine) -> None:
    added = add(engine, "json", "https://hooks.example.com/lookout/0123456789", project_id=2)
    assert len(added.secret_once) == 64 and int(added.secret_once, 16) >= 0
    assert stored(engine, added.id)["secret"] == added.secret_once
    view = views(engine)[added.id]
    assert (view.secret, view.target, view.project_id) == ("set", "https://hooks.example.com/…6789", 2)
    assert added.secret_once not in repr(change(engine, configure.channel_views))
    other = add(engine, "json", "https://hooks.example.com/other", secret="  mine  ")
    assert other.secret_once == "" and stored(engine, other.id)["secret"] == "mine"
    assert add(engine, "json", "https://hooks.example.com/third").secret_once != added.secret_once


@pytest.mark.parametrize(("kind", "target", "secret", "project_id", "sentence"), [
    ("sms", "+15555550100", "", None, "The channel kind must be one of"),
    ("email", "not an address", "", None, "spaces"),
    ("email", "", "", None, "empty"),
    ("email", "ops@example.com", "s3cret", None, "Only a json webhook has a secret."),
    ("slack", "ftp://hooks.example.com/x", "", None, "http:// or https://"),
    ("discord", "https://x.example/" + "a" * configure.TARGET_MAX, "", None, f"at most {configure.TARGET_MAX}"),
    ("json", "https://x.example/h", "k" * 257, None, "at most 256"),
    ("email", "ops\x00@example.com", "", None, "plain text"),
    ("email", "ops\ud800@example.com", "", None, "plain text"),
    ("email", "ops@example.com", "", 99, "There is no such project."),
])
def test_a_bad_channel_is_refused_with_a_sentence_and_nothing_is_stored(
        engine: sqlalchemy.Engine, kind: str, target: str, secret: str, project_id: int | None, sentence: str) -> None:
    with pytest.raises(ValueError, match=None) as refused:
        add(engine, kind, target, secret, project_id)
    message = str(refused.value)
    assert sentence in message and message.endswith(".")
    assert views(engine) == {}


def test_the_same_channel_twice_and_one_past_the_cap_are_refused(engine: sqlalchemy.Engine,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    add(engine, "email", "ops@example.com")
    add(engine, "email", "ops@example.com", project_id=2)  # another scope: another channel
    with pytest.raises(ValueError, match="exists already"):
        add(engine, "email", "ops@example.com")
    monkeypatch.setattr(configure, "MAX_CHANNELS", 3)
    env_channel(engine)  # the environment's do not count
    add(engine, "email", "dev@example.com")
    with pytest.raises(ValueError, match="There are 3 channels already"):
        add(engine, "email", "more@example.com")
    assert len(views(engine)) == 4


def test_removing_a_channel_drops_its_pending_sends_only(engine: sqlalchemy.Engine) -> None:
    gone, kept = add(engine, "email", "a@example.com").id, add(engine, "email", "b@example.com").id
    with engine.begin() as connection:
        connection.execute(insert(DELIVERIES), [{"alert_id": 1, "channel_id": gone}, {"alert_id": 1, "channel_id": kept}])
    change(engine, configure.remove_channel, gone)
    assert list(views(engine)) == [kept]
    with engine.connect() as connection:
        assert connection.execute(select(DELIVERIES.c.channel_id)).scalars().all() == [kept]
    with pytest.raises(ValueError, match="There is no such channel."):
        change(engine, configure.remove_channel, gone)


@pytest.mark.parametrize("origin", ["console", "env"])
def test_a_channel_is_switched_off_and_on_the_environments_too(engine: sqlalchemy.Engine, origin: str) -> None:
    channel = add(engine, "email", "a@example.com").id if origin == "console" else env_channel(engine)
    change(engine, configure.switch_channel, channel, False)
    assert views(engine)[channel].enabled is False
    with pytest.raises(ValueError, match="switched off: switch it on to test it"):
        change(engine, configure.queue_test, channel, NOW)
    change(engine, configure.switch_channel, channel, True)
    assert views(engine)[channel].enabled is True
    with pytest.raises(ValueError, match="There is no such channel."):
        change(engine, configure.switch_channel, channel + 1, False)


def test_an_environment_channel_cannot_be_removed(engine: sqlalchemy.Engine) -> None:
    channel = env_channel(engine)
    with pytest.raises(ValueError) as refused:
        change(engine, configure.remove_channel, channel)
    assert str(refused.value) == configure.FROM_ENV and list(views(engine)) == [channel]


def test_a_test_alert_is_queued_for_its_channel_alone(engine: sqlalchemy.Engine) -> None:
    channel = env_channel(engine)
    key = change(engine, configure.queue_test, channel, NOW)
    with engine.connect() as connection:
        row = connection.execute(select(ALERTS).where(ALERTS.c.dedupe_key == key)).mappings().one()
    assert (row["rule"], row["channel_id"], row["fanned_out"], row["created_at"]) == ("test", channel, False, NOW)
    with pytest.raises(ValueError, match="There is no such channel."):
        change(engine, configure.queue_test, channel + 1, NOW)


def test_a_last_error_is_shown_cut_with_the_channels_url_masked(engine: sqlalchemy.Engine) -> None:
    channel = env_channel(engine)
    error = f"POST {SLACK} answered 500: " + "é" * ERROR_BYTES
    with engine.begin() as connection:
        connection.execute(CHANNELS.update().where(CHANNELS.c.id == channel).values(
            last_error=error, last_error_at=NOW, last_delivery_at=NOW - 60))
    view = views(engine)[channel]
    assert SLACK not in view.last_error and view.last_error.startswith("POST https://hooks.slack.com/…WXYZ answered 500")
    assert len(view.last_error.encode()) <= ERROR_BYTES
    assert (view.last_error_at, view.last_delivery_at, view.origin) == (NOW, NOW - 60, "env")


def test_rules_are_read_and_saved_per_project(engine: sqlalchemy.Engine) -> None:
    assert change(engine, configure.read_rules, 2) == Rules()
    mine = Rules(new_issue=False, regression=True, spike=False, spike_events=5, spike_minutes=1, quiet_minutes=0)
    change(engine, configure.save_rules, 2, mine)
    assert change(engine, configure.read_rules, 2) == mine
    assert change(engine, configure.read_rules, 1) == Rules()
    with pytest.raises(ValueError, match="spike_minutes must be a whole number from 1 to 1,440."):
        change(engine, configure.save_rules, 2, Rules(spike_minutes=1441))
    assert change(engine, configure.read_rules, 2) == mine
    for work, args in ((configure.read_rules, ()), (configure.save_rules, (Rules(),))):
        with pytest.raises(ValueError, match="There is no such project."):
            change(engine, work, 99, *args)


def test_project_names_are_listed_by_id(engine: sqlalchemy.Engine) -> None:
    assert change(engine, configure.project_names) == {1: "Lookout", 2: "Billing"}
