"""What the console pages with forms (/alerts, /tokens) share: the page read for an allowed client,
whether it may change anything, the projects offered, what the last change did, and the checks on a
form's arguments.

A maintainer's change goes: `_begin_change()` (the last change's messages go; the maintainer, or
None with the refusal in `error`), then the work through `_change()` (off the event loop; a
`ValueError`'s sentence goes to `error`), then `_show()`.

A secret in the state (one shown once, one being typed) is held in memory only: Reflex pickles each
client's state into its state files (`.states/` on disk, or Redis) and keeps them for the token's
lifetime, so the fields a page names in `unpersisted` are left out of what it pickles (read back
after a restart, they have their defaults).

A secret shown once (a new token's, a new channel's) is never logged, and is cleared by the client's
next action on the page, by "I have copied it" (`forget_secret`), by the page's next load, and by
`hold_secret` once the client has left the page (`secret_route`), may no longer hold it, or
SHOWN_FOR_S after it was made (a tab closed or left open)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import anyio.to_thread
import reflex as rx

from app.console import state as console
from app.console.accounts import Viewer
from app.console.state import ConsoleState, bounded, one_of
from app.protocol.fields import whole

T = TypeVar("T")
MAX_ROW_ID = 2**63  # a row id the database can hold
SHOWN_FOR_S = 600.0  # a secret shown once stays in the state at most this long


def choice_of(project_id: int, name: str) -> str:
    """A project as the selects offer it: "id · name"."""
    return f"{project_id} · {name[:100]}"


def project_of(choice: str) -> int | None:
    """The project id of a choice ("id · name"), None for anything else."""
    head = choice.split(" ", 1)[0]
    return int(head) if 0 < len(head) <= 18 and head.isascii() and head.isdigit() else None


def is_row_id(value: object) -> bool:
    """Whether a client's argument can be a row's id (a whole number the database can hold)."""
    return whole(value) and 0 < value < MAX_ROW_ID


def row_id(parameter: object) -> int | None:
    """A URL parameter naming a row (digits only, as many as a row id has at most), else None."""
    value = bounded(parameter)
    return int(value) if 0 < len(value) <= 18 and value.isascii() and value.isdigit() else None


class FormState(ConsoleState, mixin=True):
    read: bool = False  # the page's data has been read for this client
    may_change: bool = False  # a maintainer (or this machine): the forms show
    projects: list[str] = []  # "id · name"
    # What the last change did: a refusal (a sentence), a notice, and a secret made by it, shown to
    # the maintainer who made it until they change something else or leave.
    error: str = ""
    notice: str = ""
    secret_once: str = ""
    maintainers_only: ClassVar[str] = "Only a maintainer can change this."
    unpersisted: ClassVar[tuple[str, ...]] = ("secret_once",)  # fields never written to the state files
    secret_route: ClassVar[str] = ""  # the page the secret is shown on
    _held_at: float = 0.0  # backend only: when this client's `hold_secret` task last ran (0: none)
    _shown_at: float = 0.0  # backend only: when the secret shown was made

    def __getstate__(self) -> dict[str, Any]:
        """What Reflex pickles of this state (app/console/form_state.py's docstring): all but `unpersisted`."""
        return {name: value for name, value in super().__getstate__().items() if name not in self.unpersisted}

    def _reading(self, found: Viewer | None) -> None:
        """The page is being read for `found` (the client, as `_viewer()` found it)."""
        self.read, self.may_change = True, found is not None and found.may_change

    def _forget(self) -> None:
        self.error = self.notice = ""
        self._drop_secret()

    def _drop_secret(self) -> None:
        """The secret shown once goes (with whatever a page shows it in)."""
        self.secret_once = ""

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

    @rx.event
    async def load(self):  # noqa: ANN201 (the watcher, as ConsoleState.load returns it)
        self._forget()
        return await ConsoleState.load(self)  # type: ignore[operator]  # a mixin's handler stays its plain function

    def _begin_change(self) -> Viewer | None:
        """Start a change: the last change's messages go; the maintainer, or None with the refusal in
        `error` (none for a client that may not see the console: `refused` says why)."""
        self._forget()
        maintainer = self._maintainer()
        if maintainer is None and not self.refused:
            self.error = self.maintainers_only
        return maintainer

    async def _change(self, work: Callable[[], T]) -> T | None:
        """Run a maintainer's change off the event loop; a refusal's sentence goes to `error` (and
        None comes back)."""
        try:
            return await anyio.to_thread.run_sync(work)
        except ValueError as exc:
            self.error = str(exc)
            return None

    # A form's fields as a maintainer types or picks them: only a maintainer's form sends them.
    def _type(self, name: str, text: object, limit: int) -> None:
        """Field `name` as typed, one character more than `limit`: too long is refused, not cut."""
        if self._maintainer() is not None:
            setattr(self, name, bounded(text, limit + 1))

    def _pick(self, name: str, choice: object, choices: list[str] | tuple[str, ...], default: str) -> None:
        if self._maintainer() is not None:
            setattr(self, name, one_of(choice, choices, default))
