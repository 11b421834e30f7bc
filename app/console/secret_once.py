"""A secret shown once (a new token's), for the page state that made it: held in memory only, never in
Reflex's state files (FormState's `unpersisted`), nor logged, and cleared by the client's next action on
the page, by "I have copied it" (`forget_secret`), by the page's next load, and by `hold_secret` once the
client has left the page, may no longer hold it, or SHOWN_FOR_S after it was made (a tab closed or left
open)."""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

import reflex as rx

from app.console import state as console
from app.console.form_state import FormState

SHOWN_FOR_S = 600.0  # a new token's secret stays in the state at most this long


class SecretOnceState(FormState, mixin=True):
    secret_route: ClassVar[str] = ""  # the page the secret is shown on
    _held_at: float = 0.0  # backend only: when this client's `hold_secret` task last ran (0: none)
    _shown_at: float = 0.0  # backend only: when the secret shown was made

    def _may_hold(self) -> bool:
        """Whether the client may still see the secret it made (access checked anew)."""
        return self._maintainer() is not None

    def _show_secret(self, secret: str) -> None:
        self.secret_once, self._shown_at = secret, time.time()

    @rx.event
    def forget_secret(self) -> None:
        """The client has copied the secret: it goes."""
        self._drop_secret()
        self._admit()

    @rx.event(background=True)
    async def hold_secret(self) -> None:
        """Clear the secret shown once when the client leaves the page, may no longer hold it, or
        SHOWN_FOR_S after it was made: one task per client (as the watcher, it beats), only while
        there is a secret."""
        async with self:
            if not self.secret_once or time.time() - self._held_at < 3 * console.REFRESH_S:
                return
            self._held_at = time.time()
        while True:
            await asyncio.sleep(console.REFRESH_S)
            async with self:
                left = self.router.url.path.rstrip("/") != self.secret_route
                # Access checked on every turn: a client whose session ended loses the secret too.
                if left or time.time() - self._shown_at >= SHOWN_FOR_S or not self._may_hold():
                    self._drop_secret()
                if not self.secret_once:  # decided under the lock: a later secret starts a new task
                    self._held_at = 0.0
                    return
                self._held_at = time.time()
