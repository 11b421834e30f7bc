"""What the console pages share: the access rule, relative times, and keeping a page live."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Awaitable, Callable
from typing import ClassVar

import reflex as rx

REFRESH_S = 2.0
WATCH_FOR_S = 3600.0  # a forgotten tab stops refreshing after an hour
REFUSED = "The console can only be used from this machine until sign-in is set up."


def from_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


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

    async def _read(self) -> None:
        raise NotImplementedError

    def _allowed(self) -> bool:
        self.refused = "" if from_loopback(self.router.session.client_ip) else REFUSED
        return not self.refused

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
    """The page's content, or the refusal when the client may not use the console."""
    return rx.cond(state.refused != "", rx.callout(state.refused, color_scheme="red", id="console-refused"), content)
