"""The /issues page's handlers as any websocket client could call them, on a real SQLite file: the
search comes from the URL and goes to it; a bad search gets its sentence; saved searches are one's
own, pinned ones a maintainer's; bulk actions are a maintainer's, on a selection or on every match."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import sqlalchemy

from app.console import state as console
from app.console.accounts import Accounts
from app.console.state import REFUSED
from app.ingest.store import InboxStore
from app.pages.issues_state import DEFAULT_QUERY, IssuesState
from app.routes import issues_search
from app.settings import SETTINGS
from tests.console.clients import LOOPBACK, STRANGER, client_state, console_database, run, shown, signed_in
from tests.factories import error, event_envelope, query

HOSTILE: list[object] = ["", "x" * 1_000_000, None, True, -1, 0, 2**70, 3.5, [1], {"id": 1}, "1; drop table inbox_issue"]


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[sqlalchemy.Engine]:
    """The console's database (tests/console/clients.py) with 30 issues "Checkout n" (n = 0..29) and a
    viewer and a maintainer who can sign in from elsewhere."""
    for eng in console_database(tmp_path, monkeypatch):
        inbox = InboxStore(eng)
        for n in range(30):
            inbox.ingest_envelope(event_envelope(error(f"Checkout {'abcdefghijklmnopqrstuvwxyzABCD'[n]}", kind="CartError"),
                                                 dsn=str(SETTINGS.local_dsn)))
        accounts = Accounts(eng, from_env={})
        console.use_database(eng, accounts)
        for name, role in (("vera", "viewer"), ("max", "maintainer")):
            accounts.add_user(name, role, f"{name}-password")
        yield eng


def opened(who: dict[str, object], path: str = "/issues") -> IssuesState:
    state = client_state(IssuesState, who, path)
    call(state, "load")
    return state


def call(state: IssuesState, name: str, *args: object) -> object:
    async def go() -> object:
        handler = IssuesState.event_handlers[name]
        result = handler.fn(state, *args)
        if hasattr(result, "__await__"):
            return await result
        if hasattr(result, "__aiter__"):
            await run(handler, state, list(args))
        return result
    return asyncio.run(go())


def statuses(engine: sqlalchemy.Engine) -> dict[str, int]:
    with engine.connect() as connection:
        rows = connection.execute(sqlalchemy.text("select status, count(*) from inbox_issue group by status")).all()
    return {status: count for status, count in rows}


def test_the_url_names_the_search_and_a_search_goes_to_its_url(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK)
    assert state.query == DEFAULT_QUERY and state.total == 31 and len(state.rows) == 25
    narrowed = opened(LOOPBACK, "/issues?query=CartError&sort=new")
    assert narrowed.total == 30 and narrowed.sort == "new"
    assert all("CartError" in row.title for row in narrowed.rows)
    redirect = call(narrowed, "search", {"query": 'is:unresolved "Checkout b"'})
    target = urlsplit(redirected_to(redirect))
    assert target.path == "/issues"
    assert parse_qs(target.query) == {"query": ['is:unresolved "Checkout b"'], "sort": ["new"]}
    assert redirected_to(call(narrowed, "set_sort", "freq")) == issues_search("CartError", "freq")
    # (Reflex decodes the URL's query for the state; this test's client passes it as given.)
    linked = opened(LOOPBACK, "/issues?" + "&".join(f"{k}={v[0]}" for k, v in parse_qs(target.query).items()))
    assert sorted(row.title for row in linked.rows) == ["CartError: Checkout B", "CartError: Checkout b"]  # any case


def redirected_to(spec: object) -> str:
    """The path of an `rx.redirect` a handler returned."""
    return dict((str(name), value._var_value) for name, value in spec.args)["path"]  # type: ignore[attr-defined]


def test_a_search_that_does_not_parse_says_which_term(engine: sqlalchemy.Engine) -> None:
    state = opened(LOOPBACK, "/issues?query=timesSeen:>many")
    assert "timesSeen" in state.problem and state.rows == [] and state.total == 0


def test_saved_searches_are_ones_own_and_pinned_ones_a_maintainers(engine: sqlalchemy.Engine) -> None:
    vera = opened(signed_in(engine, "vera", "viewer"), "/issues?query=CartError")
    call(vera, "save_search", {"name": "Carts", "pinned": "on"})
    assert vera.error == "Only a maintainer can pin a search for everyone."
    call(vera, "save_search", {"name": "Carts"})
    assert [(s.name, s.pinned) for s in vera.saved] == [("Carts", False)]
    max_ = opened(signed_in(engine, "max", "maintainer"), "/issues?query=is:unresolved")
    assert max_.saved == []  # vera's own
    call(max_, "save_search", {"name": "Everything open", "pinned": "on"})
    vera = opened(signed_in(engine, "vera", "viewer"))
    assert [(s.name, s.pinned) for s in vera.saved] == [("Everything open", True), ("Carts", False)]
    call(vera, "delete_saved", vera.saved[0].id)
    assert vera.error == "That saved search is not yours to delete." and len(vera.saved) == 2
    call(vera, "delete_saved", vera.saved[1].id)
    assert [s.name for s in vera.saved] == ["Everything open"]


def test_bulk_actions_are_a_maintainers_on_a_selection_or_on_every_match(engine: sqlalchemy.Engine) -> None:
    vera = opened(signed_in(engine, "vera", "viewer"), "/issues?query=CartError")
    call(vera, "toggle_page")
    call(vera, "bulk", "resolve")
    assert vera.error == "Only a maintainer can change this." and statuses(engine) == {"unresolved": 31}
    max_ = opened(signed_in(engine, "max", "maintainer"), "/issues?query=CartError")
    call(max_, "toggle", max_.rows[0].id)
    call(max_, "toggle", max_.rows[1].id)
    call(max_, "bulk", "resolve")
    assert max_.notice == "2 of 2 issues resolved." and statuses(engine) == {"unresolved": 29, "resolved": 2}
    assert max_.selected == [] and max_.total == 30  # the list is read again: resolved ones match CartError still
    call(max_, "pick_all_matching", True)
    call(max_, "bulk", "ignore_24h")
    assert max_.notice == "28 of 30 issues ignored; 2 unchanged."
    assert statuses(engine) == {"unresolved": 1, "resolved": 2, "ignored": 28}
    assert query(InboxStore(engine), "select count(*) from inbox_issue where ignored_until is not null") == [(28,)]


def test_a_client_elsewhere_is_refused_and_hostile_arguments_change_nothing(engine: sqlalchemy.Engine) -> None:
    stranger = opened(STRANGER)
    assert stranger.refused == REFUSED and stranger.rows == []
    for name in ("toggle", "toggle_page", "pick_all_matching", "bulk", "save_search", "delete_saved", "search"):
        for argument in HOSTILE[:3]:
            call(stranger, name, *([] if name == "toggle_page" else [argument]))
    assert stranger.rows == [] and "Checkout" not in shown(stranger)
    maintainer = opened(LOOPBACK)
    for argument in HOSTILE:
        for name in ("toggle", "pick_all_matching", "bulk", "save_search", "delete_saved", "search"):
            call(maintainer, name, argument)
    assert statuses(engine) == {"unresolved": 31}
    assert query(InboxStore(engine), "select count(*) from inbox_saved_search") == [(0,)]
