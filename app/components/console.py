"""What the console pages share: the access rule, relative times, and keeping a page live.

The access rule: from this machine (loopback) the console is open, with every right; from any
other address it needs a signed-in session (app/inbox/accounts.py), whose HttpOnly cookie comes
with the page's connection to the backend.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import ClassVar

import reflex as rx

from app import db, routes
from app.inbox.accounts import Accounts, Viewer, cookie_token, from_this_machine

REFRESH_S = 2.0
WATCH_FOR_S = 3600.0  # a forgotten tab stops refreshing after an hour
REFUSED = "Sign in to use the console from another machine."
THIS_MACHINE = Viewer("this machine", "maintainer")
_accounts: Accounts | None = None


def accounts() -> Accounts:
    """The console's accounts (LOOKOUT_CONSOLE_USERS is read on first use, i.e. at start-up)."""
    global _accounts
    if _accounts is None:
        _accounts = Accounts(db.engine())
    return _accounts


def viewer_of(client_ip: str, forwarded_for: str, cookie_header: str) -> Viewer | None:
    """Who is using the console: this machine, a signed-in user, or nobody allowed."""
    if from_this_machine(client_ip, forwarded_for):
        return THIS_MACHINE
    token = cookie_token(cookie_header)
    return accounts().session(token) if token else None


def ago(timestamp: float, now: float) -> str:
    seconds = max(0, int(now - timestamp))
    for size, unit in ((86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


async def keep_fresh(state: rx.State, route: str, read: Callable[[], Awaitable[None]]) -> None:
    """For a background event handler: re-read every REFRESH_S while the client stays on `route`."""
    started = time.monotonic()
    while time.monotonic() - started < WATCH_FOR_S:
        await asyncio.sleep(REFRESH_S)
        async with state:
            if state.router.url.path.rstrip("/") != route:
                return
            await read()


class ConsoleState(rx.State, mixin=True):
    """What each console page's state shares: the access check when the page loads, and, for a
    page with a `live_route`, re-reading its data every REFRESH_S while it stays open."""

    refused: str = ""
    watching: bool = False
    live_route: ClassVar[str] = ""
    viewer: str = ""  # who is signed in ("" from this machine)

    async def _read(self) -> None:
        raise NotImplementedError

    def _viewer(self) -> Viewer | None:
        # The page's connection brings the session cookie (HttpOnly: page scripts never see it).
        headers = self.router.headers
        return viewer_of(self.router.session.client_ip, headers.raw_headers.get("x-forwarded-for", ""), headers.cookie)

    def _allowed(self) -> bool:
        found = self._viewer()
        self.refused = "" if found else REFUSED
        self.viewer = "" if found is None or found is THIS_MACHINE else f"{found.name} ({found.role})"
        return found is not None

    @rx.event
    async def load(self):
        if not self._allowed():
            return None
        await self._read()
        if self.live_route and not self.watching:
            return type(self).watch
        return None

    @rx.event(background=True)
    async def watch(self) -> None:
        async with self:
            self.watching = True
        try:
            await keep_fresh(self, self.live_route, self._read)
        finally:
            async with self:
                self.watching = False


def unless_refused(state: type[ConsoleState], content: rx.Component) -> rx.Component:
    """The page's content, or the refusal (with the way to sign in) when the client may not see it."""
    return rx.cond(
        state.refused != "",
        rx.vstack(
            rx.callout(state.refused, color_scheme="red", id="console-refused"),
            rx.link("Sign in", href=routes.SIGN_IN, id="console-sign-in"),
        ),
        rx.vstack(rx.cond(state.viewer != "", rx.text("Signed in as ", state.viewer, size="1", id="console-viewer")),
                  content, width="100%"),
    )
