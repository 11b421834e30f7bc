"""The /tokens page's handlers as any websocket client could call them, on a real SQLite file: a
client elsewhere is refused and a viewer sees the list but makes and revokes nothing; a maintainer
makes a token and sees its secret once, then revokes it; hostile arguments get a sentence or are
ignored, never a crash."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy
from sqlalchemy import select

from app import db
from app.console import form_state, state as console
from app.console.accounts import Accounts
from app.console.state import REFUSED
from app.ingest.store import InboxStore
from app.pages.tokens_state import MAINTAINERS_ONLY, NO_TOKEN, TokensState
from app.projects.registry import Projects
from app.sourcemaps.tables import TOKENS
from app.sourcemaps.tokens import TokenRefused, Tokens
from reflex_lookout.dsn import Dsn
from tests.console.clients import LOOPBACK, STRANGER, client_state, persisted, run, shown, signed_in
from tests.environment import LOCAL_DSN

HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 0, 2**70, 3.5, [1], {"id": 1}, "1; drop table upload_token"]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """Projects 1 and 2 "<b>Billing</b>", a viewer and a maintainer signed in from elsewhere; the page
    reads through `console.database()`."""
    eng = db.engine(f"sqlite:///{tmp_path / 'tokens.db'}")
    db.migrate(eng)
    console.use_database(eng)  # the pages' database (app/console/state.py), until the test ends
    InboxStore(eng).ensure_project(Dsn.parse(LOCAL_DSN))
    Projects(eng).add("<b>Billing</b>")
    accounts = Accounts(eng, from_env={})
    console.use_database(eng, accounts)
    for name, role in (("vera", "viewer"), ("max", "maintainer")):
        accounts.add_user(name, role, f"{name}-password")
    yield eng
    console.use_database(None)


@pytest.fixture
def secret(engine: sqlalchemy.Engine) -> str:
    """Token 1, "ci", of project 2: its secret."""
    return Tokens(engine).add(2, "ci")[1]


def call(state: TokensState, name: str, *args: object) -> None:
    asyncio.run(run(TokensState.event_handlers[name], state, list(args)))


def opened(who: dict[str, object]) -> TokensState:
    state = client_state(TokensState, who, "/tokens")
    call(state, "load")
    return state


def stored(engine: sqlalchemy.Engine) -> list:
    with engine.connect() as connection:
        return connection.execute(select(TOKENS).order_by(TOKENS.c.id)).all()


def every_change(state: TokensState, token_id: int) -> None:
    """Every handler that changes something, with arguments that would work for a maintainer."""
    call(state, "set_project", "2 · <b>Billing</b>")
    call(state, "set_label", "sneaky")
    call(state, "create")
    call(state, "revoke", token_id)


def test_a_client_elsewhere_is_refused_and_changes_nothing(engine: sqlalchemy.Engine, secret: str) -> None:
    before = stored(engine)
    state = opened(STRANGER)
    assert state.refused == REFUSED and state.tokens == [] and state.projects == [] and not state.read
    every_change(state, 1)
    call(state, "forget_secret")
    assert state.refused == REFUSED and state.error == "" and state.notice == "" and state.secret_once == ""
    assert "Billing" not in shown(state) and secret[:8] not in shown(state)
    assert stored(engine) == before


def test_a_viewer_sees_the_list_but_makes_and_revokes_nothing(engine: sqlalchemy.Engine, secret: str) -> None:
    before = stored(engine)
    state = opened(signed_in(engine, "vera", "viewer"))
    assert (state.refused, state.viewer, state.read, state.may_change) == ("", "vera (viewer)", True, False)
    [row] = state.tokens
    assert (row.id, row.label, row.project, row.prefix, row.created_by, row.last_used, row.revoked, row.revoked_on) == (
        1, "ci", "2 · <b>Billing</b>", secret[:8] + "…", "cli", "never", False, "")
    every_change(state, 1)
    assert state.error == MAINTAINERS_ONLY and state.label == "" and state.secret_once == ""
    state.project, state.label = "1 · Lookout", "typed while a maintainer"  # a draft is not stored either
    call(state, "create")
    assert state.error == MAINTAINERS_ONLY
    assert secret not in shown(state)
    assert stored(engine) == before
    assert Tokens(engine).check(f"Bearer {secret}").id == 1


def test_a_maintainer_makes_a_token_sees_it_once_and_revokes_it(engine: sqlalchemy.Engine, secret: str) -> None:
    state = opened(signed_in(engine, "max", "maintainer"))
    assert state.may_change and state.projects == ["1 · Lookout", "2 · <b>Billing</b>"] and state.project == "1 · Lookout"
    call(state, "set_project", "2 · <b>Billing</b>")
    call(state, "set_label", "  billing-web  ")
    call(state, "create")
    made = state.secret_once
    assert (state.error, state.notice) == ("", "Token 2 made for 2 · <b>Billing</b>: copy it now, it is shown only once.")
    assert len(made) == 64 and state.label == ""
    assert state.settings_once == (
        f"SENTRY_URL=http://localhost:3000\nSENTRY_ORG=lookout\nSENTRY_PROJECT=2\nSENTRY_AUTH_TOKEN={made}\n")
    new = state.tokens[0]  # newest first
    assert (new.id, new.label, new.project, new.prefix, new.created_by) == (
        2, "billing-web", "2 · <b>Billing</b>", made[:8] + "…", "max")
    assert Tokens(engine).check(f"Bearer {made}").project_id == 2
    assert all(made not in str(value) for row in stored(engine) for value in row)

    call(state, "load")  # the page again: the secret is gone from the state; "last used" shows the check
    assert state.secret_once == state.settings_once == "" and made not in shown(state)
    assert state.tokens[0].last_used.endswith("ago")

    call(state, "revoke", 2)
    assert (state.error, state.notice) == ("", "Token 2 is revoked: uploads with it are refused.")
    assert state.tokens[0].revoked is True and state.tokens[0].revoked_on != ""
    assert state.tokens[1].revoked is False and state.tokens[1].revoked_on == ""
    with pytest.raises(TokenRefused, match="was revoked on"):
        Tokens(engine).check(f"Bearer {made}")
    call(state, "revoke", 99)
    assert state.error == NO_TOKEN


def test_the_secret_goes_with_the_next_action_or_when_copied(engine: sqlalchemy.Engine, secret: str) -> None:
    state = opened(LOOPBACK)
    call(state, "create")
    assert len(state.secret_once) == 64 and state.tokens[0].created_by == "this machine"
    call(state, "revoke", 1)  # any other action
    assert state.secret_once == state.settings_once == ""
    call(state, "create")
    assert state.secret_once
    call(state, "forget_secret")
    assert state.secret_once == state.settings_once == ""


def test_the_secret_is_shown_to_its_client_but_never_written_to_the_state_files(
        engine: sqlalchemy.Engine, secret: str) -> None:
    state = opened(LOOPBACK)
    call(state, "create")
    made = state.secret_once
    written, reread = asyncio.run(persisted(state))
    assert len(made) == 64 and made in state.settings_once and made in shown(state)  # the client still sees it
    assert state.notice.encode() in written  # the files hold the page's state ...
    assert made.encode() not in written  # ... but for the secret, alone or in the settings
    again = reread.get_substate(TokensState.get_full_name().split(".")[1:])
    assert (again.secret_once, again.settings_once, again.notice) == ("", "", state.notice)  # as after a restart


class Beats:
    """`asyncio` for app/console/form_state.py: counts `hold_secret`'s beats, and stops a task that never ends."""

    def __init__(self) -> None:
        self.count = 0

    async def sleep(self, _seconds: float) -> None:
        self.count += 1
        assert self.count < 100, "hold_secret keeps the secret"
        await asyncio.sleep(0)


def test_the_secret_goes_when_the_client_leaves_the_page_or_once_it_is_old(
    engine: sqlalchemy.Engine, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    beats = Beats()
    monkeypatch.setattr(form_state, "asyncio", beats)
    state = opened(LOOPBACK)
    call(state, "create")
    assert state.secret_once
    state._held_at = time.time()  # another task holds it (beating): this one leaves at once
    call(state, "hold_secret")
    assert beats.count == 0 and state.secret_once
    state._held_at = 0.0
    root = state.parent_state  # the client goes to /issues (its next event carries the route)
    root.router_data = root._update_router_vars({**root.router_data, "pathname": "/issues", "asPath": "/issues"},
                                                root.router_data)
    call(state, "hold_secret")
    assert state.secret_once == state.settings_once == "" and beats.count == 1

    on_page = opened(LOOPBACK)
    call(on_page, "create")
    on_page._shown_at -= form_state.SHOWN_FOR_S  # made that long ago; the client still on /tokens
    call(on_page, "hold_secret")
    assert on_page.secret_once == "" and on_page.router.url.path == "/tokens" and beats.count == 2
    call(on_page, "hold_secret")  # nothing to hold: returns at once
    assert beats.count == 2


def test_the_secret_goes_on_the_next_turn_once_the_maintainers_session_has_ended(
    engine: sqlalchemy.Engine, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Access is checked on every turn of `hold_secret`: still on /tokens, the secret young, but the
    session gone (signed out elsewhere), the secret and the page's data go."""
    beats = Beats()
    monkeypatch.setattr(form_state, "asyncio", beats)
    who = signed_in(engine, "max", "maintainer")
    state = opened(who)
    call(state, "create")
    assert state.secret_once and state.tokens
    console.accounts().end_session(str(who["headers"]["cookie"]).split("=", 1)[1])
    call(state, "hold_secret")
    assert state.secret_once == state.settings_once == "" and state.tokens == [] and state.refused == REFUSED
    assert beats.count == 1


def test_a_label_too_long_is_refused_not_cut(engine: sqlalchemy.Engine, secret: str) -> None:
    state = opened(LOOPBACK)
    call(state, "set_label", "x" * 10_000)
    call(state, "create")
    assert state.error == "A token's label is one line of at most 100 characters."
    assert state.secret_once == "" and len(stored(engine)) == 1


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_arguments_are_bounded_ignored_or_refused_with_a_sentence(engine: sqlalchemy.Engine, secret: str,
                                                                          value: object) -> None:
    before = stored(engine)
    state = opened(LOOPBACK)
    call(state, "revoke", value)
    assert state.error == NO_TOKEN
    call(state, "set_project", value)
    call(state, "set_label", value)
    assert state.project == "1 · Lookout" and len(state.label) <= 101
    assert stored(engine) == before
