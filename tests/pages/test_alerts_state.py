"""The /alerts page's handlers as any websocket client could call them, on a real SQLite file: a
client elsewhere is refused and a viewer changes nothing; a maintainer adds, tests, switches and
removes channels and saves rules; hostile arguments get a sentence or are ignored, never a crash."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import insert, select

from app import db
from app.alerts import configure
from app.alerts.configure import CHANNELS, DELIVERIES
from app.alerts.models import Alert, AlertRules
from app.alerts.rules import Rules
from app.console import state as console
from app.console.accounts import Accounts
from app.console.state import REFUSED
from app.ingest.store import InboxStore
from app.pages import alerts_state
from app.pages.alerts_state import MAINTAINERS_ONLY, AlertsState
from app.projects.registry import Projects
from reflex_lookout.dsn import Dsn
from tests.console.clients import LOOPBACK, STRANGER, client_state, persisted, run, shown, signed_in
from tests.environment import LOCAL_DSN

HOOK = "https://hooks.example.com/services/lookout/0123456789"
SECRET = "kept-secret-of-the-json-channel"
ALERTS = Alert.__table__
RULES = AlertRules.__table__
HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 0, 2**70, 3.5, [1], {"id": 1}, "1; drop table alert_channel"]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """Projects 1 and 2 "Billing", a webhook channel with a secret, an environment channel, a
    viewer and a maintainer signed in from elsewhere; the page reads through `console.database()`."""
    eng = db.engine(f"sqlite:///{tmp_path / 'alerts.db'}")
    db.migrate(eng)
    console.use_database(eng)  # the pages' database (app/console/state.py), until the test ends
    InboxStore(eng).ensure_project(Dsn.parse(LOCAL_DSN))
    Projects(eng).add("<b>Billing</b>")
    with eng.begin() as connection:
        connection.execute(insert(CHANNELS), [
            {"kind": "json", "target": HOOK, "secret": SECRET, "origin": "console", "created_at": 1.0, "last_error": ""},
            {"kind": "email", "target": "ops@example.com", "secret": "", "origin": "env", "created_at": 1.0, "last_error": ""},
        ])
    accounts = Accounts(eng, from_env={})
    console.use_database(eng, accounts)
    for name, role in (("vera", "viewer"), ("max", "maintainer")):
        accounts.add_user(name, role, f"{name}-password")
    yield eng
    console.use_database(None)


def call(state: AlertsState, name: str, *args: object) -> None:
    asyncio.run(run(AlertsState.event_handlers[name], state, list(args)))


def opened(who: dict[str, object]) -> AlertsState:
    state = client_state(AlertsState, who, "/alerts")
    call(state, "load")
    return state


def everything(engine: sqlalchemy.Engine) -> tuple[list, list, list, list]:
    """What a change could touch: channels, pending sends, alerts, rules."""
    with engine.connect() as connection:
        return tuple(connection.execute(select(table)).all() for table in (CHANNELS, DELIVERIES, ALERTS, RULES))


def every_change(state: AlertsState, channel_id: int) -> None:
    """Every handler that changes something, with arguments that would work for a maintainer."""
    call(state, "set_kind", "json")
    call(state, "set_target", "https://hooks.example.com/another")
    call(state, "set_channel_project", "2 · <b>Billing</b>")
    call(state, "add_channel")
    call(state, "send_test", channel_id)
    call(state, "toggle_channel", channel_id, False)
    call(state, "remove_channel", channel_id)
    call(state, "set_rule", "spike", False)
    call(state, "set_rule_number", "spike_events", "5")
    call(state, "save_rules")


def test_a_client_elsewhere_is_refused_and_changes_nothing(engine: sqlalchemy.Engine) -> None:
    before = everything(engine)
    state = opened(STRANGER)
    assert state.refused == REFUSED and state.channels == [] and state.projects == [] and not state.read
    every_change(state, 1)
    assert state.refused == REFUSED and state.error == "" and state.notice == ""
    assert "hooks.example.com" not in shown(state) and "Billing" not in shown(state)
    assert everything(engine) == before


def test_a_viewer_sees_the_channels_masked_and_read_only_and_changes_nothing(engine: sqlalchemy.Engine) -> None:
    before = everything(engine)
    state = opened(signed_in(engine, "vera", "viewer"))
    assert (state.refused, state.viewer, state.read, state.may_change) == ("", "vera (viewer)", True, False)
    assert [(c.kind, c.target, c.secret, c.from_environment, c.enabled, c.last_delivery) for c in state.channels] == [
        ("json", "https://hooks.example.com/…6789", "set", False, True, "never"),
        ("email", "ops@example.com", "", True, True, "never"),
    ]
    assert state.projects == ["1 · Lookout", "2 · <b>Billing</b>"]
    every_change(state, 1)
    assert state.error == MAINTAINERS_ONLY
    assert (state.target, state.kind, state.spike, state.spike_events) == ("", "email", True, "100")
    # A draft that would be stored (typed while this client was a maintainer, say) is not either.
    state.kind, state.target, state.spike_events = "email", "dev@example.com", "5"
    for name in ("add_channel", "save_rules"):
        call(state, name)
        assert state.error == MAINTAINERS_ONLY
    assert HOOK not in shown(state) and SECRET not in shown(state)
    assert everything(engine) == before


def test_an_email_channel_needs_a_server_that_can_send_mail(engine: sqlalchemy.Engine,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    state = opened(signed_in(engine, "max", "maintainer"))
    before = everything(engine)
    call(state, "set_kind", "email")
    call(state, "set_target", "dev@example.com")
    call(state, "add_channel")  # the tests' settings name no SMTP server
    assert state.error == configure.NO_MAIL
    assert everything(engine) == before
    monkeypatch.setattr(alerts_state, "SETTINGS", dataclasses.replace(
        alerts_state.SETTINGS, smtp_url="smtp://127.0.0.1:25", alert_from="lookout@example.com"))
    call(state, "set_target", "dev@example.com")
    call(state, "add_channel")
    assert (state.error, state.channels[-1].kind, state.channels[-1].target) == ("", "email", "dev@example.com")


def test_a_maintainer_adds_tests_switches_off_and_removes_a_channel(engine: sqlalchemy.Engine) -> None:
    state = opened(signed_in(engine, "max", "maintainer"))
    assert state.may_change and state.viewer == "max (maintainer)"
    call(state, "set_kind", "json")
    call(state, "set_target", " https://hooks.example.com/new/abcdefghijkl ")
    call(state, "set_channel_project", "2 · <b>Billing</b>")
    call(state, "add_channel")
    assert (state.error, state.notice) == ("", "Channel added.")
    new = state.channels[-1]
    assert (new.kind, new.target, new.project, new.secret) == (
        "json", "https://hooks.example.com/…ijkl", "2 · <b>Billing</b>", "set")
    assert len(state.secret_once) == 64 and state.target == ""
    with engine.connect() as connection:
        row = connection.execute(select(CHANNELS).where(CHANNELS.c.id == new.id)).mappings().one()
    assert (row["secret"], row["project_id"], row["target"]) == (state.secret_once, 2, "https://hooks.example.com/new/abcdefghijkl")

    call(state, "send_test", new.id)
    assert state.notice.startswith("Test alert queued") and state.secret_once == ""  # shown once
    with engine.connect() as connection:
        assert connection.execute(select(ALERTS.c.rule, ALERTS.c.channel_id)).all() == [("test", new.id)]
        connection.execute(CHANNELS.update().where(CHANNELS.c.id == new.id).values(
            last_error="answered 500", last_error_at=1.0))
        connection.commit()
    call(state, "load")  # the sender's record shows on the next read (the live page re-reads every 2 s)
    assert state.channels[-1].last_error == "answered 500" and state.channels[-1].last_error_when.endswith("ago")

    call(state, "toggle_channel", new.id, False)
    assert state.channels[-1].enabled is False
    call(state, "send_test", new.id)
    assert state.error == "This channel is switched off: switch it on to test it."
    call(state, "remove_channel", new.id)
    assert state.notice == "Channel removed." and [c.id for c in state.channels] == [1, 2]


def test_the_made_secret_and_a_url_being_typed_are_never_written_to_the_state_files(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK)
    call(state, "set_kind", "json")
    call(state, "set_target", "https://hooks.example.com/new/abcdefghijkl")
    call(state, "add_channel")
    made = state.secret_once
    call(state, "set_target", "https://hooks.example.com/typed/mnopqrstuvwx")
    call(state, "set_secret", "a-secret-being-typed")
    written, reread = asyncio.run(persisted(state))
    assert len(made) == 64 and made in shown(state)  # the client still sees it
    assert b"Channel added." in written  # the files hold the page's state ...
    for secret in (made, "mnopqrstuvwx", "a-secret-being-typed"):  # ... but for its secrets
        assert secret.encode() not in written, secret
    again = reread.get_substate(AlertsState.get_full_name().split(".")[1:])
    assert (again.secret_once, again.target, again.secret, again.kind) == ("", "", "", "json")  # as after a restart


def test_the_page_stays_live_for_an_allowed_client_only(engine: sqlalchemy.Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watcher re-reads the channels (the sender's last delivery and error show) while the client
    stays on /alerts and may see the console."""
    monkeypatch.setattr(console, "REFRESH_S", 0.01)
    monkeypatch.setattr(console, "WATCH_FOR_S", 0.05)
    here, stranger = client_state(AlertsState, LOOPBACK, "/alerts"), client_state(AlertsState, STRANGER, "/alerts")
    for state in (here, stranger):
        call(state, "watch")
    assert [c.target for c in here.channels] == ["https://hooks.example.com/…6789", "ops@example.com"]
    assert stranger.channels == [] and stranger.refused == REFUSED


def test_an_environment_channel_is_tested_and_switched_but_not_removed(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK)
    call(state, "remove_channel", 2)
    assert state.error == configure.FROM_ENV and len(state.channels) == 2
    call(state, "send_test", 2)
    assert state.error == "" and state.notice.startswith("Test alert queued")
    call(state, "toggle_channel", 2, False)
    assert state.error == "" and state.channels[1].enabled is False


@pytest.mark.parametrize("channel_id", HOSTILE + [99])
def test_a_hostile_channel_id_gets_a_sentence(engine: sqlalchemy.Engine, channel_id: object) -> None:
    before = everything(engine)
    state = opened(LOOPBACK)
    for name, args in (("remove_channel", [channel_id]), ("toggle_channel", [channel_id, False]),
                       ("send_test", [channel_id])):
        call(state, name, *args)
        assert state.error == configure.NO_CHANNEL, (name, args)
    assert everything(engine) == before


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_fields_are_bounded_ignored_or_refused_with_a_sentence(engine: sqlalchemy.Engine, value: object) -> None:
    before = everything(engine)
    state = opened(LOOPBACK)
    call(state, "toggle_channel", 1, value)
    assert state.error == ("" if isinstance(value, bool) else "A channel is switched on or off.")
    for name in ("set_kind", "set_target", "set_secret", "set_channel_project", "choose_rules_project"):
        call(state, name, value)
    call(state, "set_rule", value, False)
    call(state, "set_rule", "spike", value)
    call(state, "set_rule_number", value, "5")
    call(state, "set_rule_number", "spike_events", value)
    assert state.kind == "email" and state.channel_project == alerts_state.EVERY and state.rules_project == "1 · Lookout"
    assert len(state.target) <= configure.TARGET_MAX + 1 and state.spike is True
    assert len(state.spike_events) <= alerts_state.NUMBER_DIGITS + 1
    call(state, "add_channel")
    call(state, "save_rules")
    assert state.error.endswith(".") and state.notice == ""
    assert everything(engine) == before


def test_a_target_too_long_is_refused_not_cut(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK)
    call(state, "set_kind", "slack")
    call(state, "set_target", "https://hooks.example.com/" + "a" * 10_000)
    call(state, "add_channel")
    assert state.error == f"The target must be at most {configure.TARGET_MAX} characters."
    assert len(state.channels) == 2


def test_a_maintainer_saves_a_projects_rules_and_a_viewer_sees_them(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK)
    call(state, "choose_rules_project", "2 · <b>Billing</b>")
    call(state, "set_rule", "new_issue", False)
    for name, text in (("spike_events", "5"), ("spike_minutes", "2"), ("quiet_minutes", "0")):
        call(state, "set_rule_number", name, text)
    call(state, "send_test", 99)  # any re-read (the live page's too) keeps what is being typed
    assert (state.new_issue, state.spike_events) == (False, "5")
    call(state, "save_rules")
    assert (state.error, state.notice) == ("", "Rules saved for 2 · <b>Billing</b>.")
    saved = Rules(new_issue=False, spike_events=5, spike_minutes=2, quiet_minutes=0)
    with engine.connect() as connection:
        assert configure.read_rules(connection, 2) == saved and configure.read_rules(connection, 1) == Rules()

    call(state, "set_rule_number", "spike_minutes", "1441")
    call(state, "save_rules")
    assert state.error == "spike_minutes must be a whole number from 1 to 1,440."
    call(state, "set_rule_number", "spike_minutes", "-3")
    call(state, "save_rules")
    assert state.error == "The spike's events and minutes and the quiet period are whole numbers."
    with engine.connect() as connection:
        assert configure.read_rules(connection, 2) == saved

    viewer = opened(signed_in(engine, "vera", "viewer"))
    assert viewer.rules_project == "1 · Lookout" and viewer.new_issue is True
    call(viewer, "choose_rules_project", "2 · <b>Billing</b>")
    assert (viewer.new_issue, viewer.spike_events, viewer.spike_minutes, viewer.quiet_minutes) == (False, "5", "2", "0")
