"""The state every console page shares: the access rule, relative times, and keeping a page live.

The access rule: from this machine (loopback) the console is open, with every right; from any
other address it needs a signed-in session (app/console/accounts.py), whose HttpOnly cookie comes
with the page's connection to the backend.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, ClassVar

import reflex as rx
import sqlalchemy
from reflex.istate.data import RouterData

from app import db
from app.console import access
from app.console.accounts import Accounts, Viewer, cookie_token
from app.inbox.reading import InboxReader
from app.inbox.trace_reading import TraceReader
from app.inbox.triage import Triage
from reflex_lookout.untraced import housekeeping, refused_event

REFRESH_S = 2.0
WATCH_FOR_S = 3600.0  # a forgotten tab stops refreshing after an hour
REFUSED = "Sign in to use the console from another machine."
THIS_MACHINE = Viewer("this machine", "maintainer")
_database: sqlalchemy.Engine | None = None  # `use_database`'s; None: the configured one (app/db.py)
_accounts: Accounts | None = None


def use_database(engine: sqlalchemy.Engine | None, accounts_: Accounts | None = None) -> None:
    """Point the console's pages at `engine`, with `accounts_` (None: read from it on first use), or
    back at the configured database (None). The one place a test gives the pages a database of its own."""
    global _database, _accounts
    _database, _accounts = engine, accounts_


def database() -> sqlalchemy.Engine:
    """The database the console's pages read and change: every page takes it from here."""
    return _database if _database is not None else db.engine()


def accounts() -> Accounts:
    """The console's accounts (LOOKOUT_CONSOLE_USERS is read on first use, i.e. at start-up)."""
    global _accounts
    if _accounts is None:
        _accounts = Accounts(database())
    return _accounts


def inbox_reader() -> InboxReader:
    """Issues and their events, as the console pages read them."""
    return InboxReader(database())


def triage() -> Triage:
    """A team's changes to issues (assign, comment, merge, bulk actions), as the console pages make them;
    the users of LOOKOUT_CONSOLE_USERS may be assigned too."""
    return Triage(database(), accounts().from_env)


def trace_reader() -> TraceReader:
    """Transactions and log lines, as the console pages read them."""
    return TraceReader(database())


def viewer_of(caller: access.Caller, cookie_header: str) -> Viewer | None:
    """Who is using the console: this machine (app/console/access.py), a signed-in user (with the role they
    have now), or nobody allowed."""
    if access.this_machine(caller):
        return THIS_MACHINE
    token = cookie_token(cookie_header)
    return accounts().session(token) if token else None


def tab_open(router: RouterData) -> bool:
    """Whether the tab whose event started a watcher still has its websocket: Reflex never ends a
    background task when its tab closes, so a watcher asks on every turn (it runs in the process that
    holds the socket). A handler called without a socket (a test calling it directly) counts as open."""
    return not router.session.session_id or connected(router.session.client_token)


def _any_token(_token: str) -> bool:
    return True


_connected: Callable[[str], bool] = _any_token  # `serve_in`'s
_tunnel_snapshot: Callable[[], dict[str, Any]] | None = None


def serve_in(*, connected: Callable[[str], bool] = _any_token,
             tunnel_snapshot: Callable[[], dict[str, Any]] | None = None) -> None:
    """What only the backend process knows, for its pages: whether a client token has a websocket
    in this process, and its tunnel's figures. The composition root gives them once the app is
    built (app/app.py); a test gives its own."""
    global _connected, _tunnel_snapshot
    _connected, _tunnel_snapshot = connected, tunnel_snapshot


def connected(token: str) -> bool:
    return _connected(token)


def tunnel_snapshot() -> dict[str, Any]:
    """The tunnel's counters and the outbox's depth, as the home page shows them (may read the
    database: call off the loop)."""
    if _tunnel_snapshot is None:
        raise RuntimeError("no tunnel in this process: the backend gives it (console.serve_in)")
    return _tunnel_snapshot()


def ago(timestamp: float, now: float) -> str:
    seconds = max(0, int(now - timestamp))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


MAX_WATCHERS = 256  # live pages refreshing at once in this process; more wait for a free slot
MAX_TEXT = 200  # characters kept of a search or filter value a client sends
_watchers = 0


def bounded(text: object, limit: int = MAX_TEXT) -> str:
    """A client's text argument, as text and at most `limit` characters (anything else is "")."""
    return text[:limit] if isinstance(text, str) else ""


def one_of(value: object, choices: list[str] | tuple[str, ...], default: str) -> str:
    """A client's choice when it is one of `choices`, else `default`."""
    return value if isinstance(value, str) and value in choices else default


class ConsoleState(rx.State, mixin=True):
    """What each console page's state shares: the access check, made in every handler (each one
    is a public endpoint: any websocket client can send any event, in any order, with any
    arguments and any page path, without `load` having run), and, for a page with a `live_route`,
    re-reading its data every REFRESH_S while it stays open, checking access on every turn.

    Handlers change the page through `_show()`, never `_read()` directly: `_show()` reads only for
    a client allowed to see the console, and clears everything the state holds for any other."""

    refused: str = ""
    watch_beat: float = 0.0  # when this client's watcher last ran (0: none)
    live_route: ClassVar[str] = ""
    viewer: str = ""  # who is signed in ("" from this machine)

    async def _read(self) -> None:
        raise NotImplementedError

    def _viewer(self) -> Viewer | None:
        # The headers of the page's own websocket upgrade (never the event's payload), with the
        # session cookie (HttpOnly: page scripts never see it).
        return viewer_of(access.Caller.from_router(self.router), self.router.headers.cookie)

    def _admit(self) -> bool:
        """Apply the access rule now: whether this client may see the console. If not, the state
        keeps none of its data and `refused` says why; if so, `viewer` says who it is."""
        found = self._viewer()
        if found is None:
            refused_event()  # no transaction: reflex_lookout/untraced.py
            # Whatever an earlier, allowed client read goes (a session may have ended). A state refused
            # already holds nothing since; resetting it again would send the client every var of it
            # once more, for each event of a flood.
            if self.refused != REFUSED:
                self.reset()
                self.refused = REFUSED
            return False
        self.refused = ""
        self.viewer = "" if found is THIS_MACHINE else f"{found.name} ({found.role})"
        return True

    def _maintainer(self) -> Viewer | None:
        """The client when it may change the inbox (a maintainer, or this machine), else None; the
        access rule applied first (`_admit`)."""
        found = self._viewer() if self._admit() else None
        return found if found is not None and found.may_change else None

    async def _show(self) -> bool:
        """Re-read the page's data when the client is allowed to see it; whether it was."""
        if not self._admit():
            return False
        await self._read()
        return True

    @rx.event
    async def load(self):
        if await self._show() and self.live_route and not self._watched(time.time()):
            return type(self).watch
        return None

    def _watched(self, now: float) -> bool:
        return now - self.watch_beat < 3 * REFRESH_S

    @rx.event(background=True)
    @housekeeping  # no transaction, no breadcrumbs: reflex_lookout/untraced.py
    async def watch(self) -> None:
        """Keep a live page fresh while its client stays on it: one watcher per client, only for
        a client allowed to see the console (checked again on every turn), for WATCH_FOR_S at most."""
        global _watchers
        async with self:
            if not self.live_route or self._watched(time.time()) or not self._admit() or _watchers >= MAX_WATCHERS:
                return
            self.watch_beat = time.time()
        _watchers += 1
        try:
            started = time.monotonic()
            while time.monotonic() - started < WATCH_FOR_S:
                await asyncio.sleep(REFRESH_S)
                if not tab_open(self.router):
                    return
                async with self:
                    if self.router.url.path.rstrip("/") != self.live_route or not await self._show():
                        return
                    self.watch_beat = time.time()
        finally:
            _watchers -= 1
            async with self:
                self.watch_beat = 0.0

