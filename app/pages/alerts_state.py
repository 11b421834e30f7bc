"""The /alerts page's state: the channels and projects as an allowed client sees them, the new
channel and the rules form as a maintainer types them, and the changes (app/alerts/configure.py).

Every handler is a public endpoint (app/console/state.py): it reads through `_show()`, changes
something only for `_maintainer()`, and takes each argument as possibly anything: bounded text, a
choice among the offered ones, a whole number (`fields.whole`), a real bool. A refusal is a
sentence in `error`."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
import reflex as rx
import sqlalchemy

from app import db, routes
from app.alerts import configure
from app.alerts.alert import KINDS
from app.alerts.channels import SECRET_MAX
from app.alerts.rules import BOUNDS, SWITCHES, Rules
from app.console.state import ConsoleState, ago, bounded, one_of
from app.ingest.fields import whole
from app.settings import SETTINGS

EVERY = "every project"
NUMBERS = tuple(BOUNDS)  # spike_events, spike_minutes, quiet_minutes
NUMBER_DIGITS = 9  # a rule's number as typed: at most this many characters
MAINTAINERS_ONLY = "Only a maintainer can change alerts."
T = TypeVar("T")


def choice_of(project_id: int, name: str) -> str:
    """A project as the selects offer it: "id · name"."""
    return f"{project_id} · {name[:100]}"


def project_of(choice: str) -> int | None:
    """The project id of a choice ("id · name"), None for EVERY (or anything else)."""
    head = choice.split(" ", 1)[0]
    return int(head) if 0 < len(head) <= 18 and head.isascii() and head.isdigit() else None


def channel_row(view: configure.ChannelView, names: dict[int, str], now: float) -> dict[str, str]:
    scope = EVERY if view.project_id is None else choice_of(view.project_id, names.get(view.project_id, "(gone)"))
    return {
        "id": str(view.id), "kind": view.kind, "target": view.target,
        "secret": view.secret if view.kind == "json" else "",
        "project": scope, "origin": "environment" if view.origin == "env" else "console",
        "enabled": "on" if view.enabled else "off",
        "last_delivery": "never" if view.last_delivery_at is None else ago(view.last_delivery_at, now),
        "last_error": view.last_error,
        "last_error_when": "" if view.last_error_at is None else ago(view.last_error_at, now),
    }


def in_transaction(work: Callable[[sqlalchemy.Connection], T]) -> Callable[[], T]:
    def run() -> T:
        with db.engine().begin() as connection:
            return work(connection)
    return run


class AlertsState(ConsoleState, rx.State):
    live_route = routes.ALERTS
    read: bool = False  # the page's data has been read for this client
    may_change: bool = False  # a maintainer (or this machine): the forms show
    channels: list[dict[str, str]] = []
    projects: list[str] = []  # "id · name"
    scopes: list[str] = [EVERY]  # a channel's: EVERY, or one of `projects`
    # The new channel, as typed.
    kind: str = "email"
    target: str = ""
    secret: str = ""
    channel_project: str = EVERY
    # What the last change did: a refusal (a sentence), a notice, and a json channel's secret made
    # for it, shown to the maintainer who added it until they change something else or leave.
    error: str = ""
    notice: str = ""
    secret_once: str = ""
    # The rules of one project, as shown or being edited.
    rules_project: str = ""
    rules_read: str = ""  # whose rules the form holds ("": none yet)
    new_issue: bool = True
    regression: bool = True
    spike: bool = True
    spike_events: str = ""
    spike_minutes: str = ""
    quiet_minutes: str = ""

    async def _read(self) -> None:
        found = self._viewer()
        self.read, self.may_change = True, found is not None and found.may_change
        now = time.time()

        def read(connection: sqlalchemy.Connection) -> tuple[list[configure.ChannelView], dict[int, str]]:
            return configure.channel_views(connection), configure.project_names(connection)

        views, names = await anyio.to_thread.run_sync(in_transaction(read))
        self.projects = [choice_of(project_id, name) for project_id, name in names.items()]
        self.scopes = [EVERY, *self.projects]
        self.channels = [channel_row(view, names, now) for view in views]
        if self.channel_project not in self.scopes:
            self.channel_project = EVERY
        if self.rules_project not in self.projects:
            self.rules_project = self.projects[0] if self.projects else ""
        # A maintainer's form keeps what they typed across refreshes; a viewer sees the rules as saved.
        if self.rules_project and (self.rules_read != self.rules_project or not self.may_change):
            await self._read_rules()

    async def _read_rules(self) -> None:
        project_id = project_of(self.rules_project)
        if project_id is None:
            return
        try:
            rules = await anyio.to_thread.run_sync(in_transaction(lambda c: configure.read_rules(c, project_id)))
        except ValueError:  # the project went since the list was read
            return
        self.new_issue, self.regression, self.spike = rules.new_issue, rules.regression, rules.spike
        self.spike_events, self.spike_minutes = str(rules.spike_events), str(rules.spike_minutes)
        self.quiet_minutes = str(rules.quiet_minutes)
        self.rules_read = self.rules_project

    @rx.event
    async def load(self):  # noqa: ANN201 (the watcher, as ConsoleState.load returns it)
        self.error = self.notice = self.secret_once = ""
        self.rules_read = ""
        return await ConsoleState.load(self)

    def _may_change(self) -> bool:
        """Whether this client may change alerts; says why not (unless it may not see the console)."""
        self.error = self.notice = self.secret_once = ""
        if self._maintainer() is not None:
            return True
        if not self.refused:
            self.error = MAINTAINERS_ONLY
        return False

    async def _change(self, work: Callable[[sqlalchemy.Connection], T]) -> T | None:
        """Run a maintainer's change in one transaction; a refusal's sentence goes to `error` (and
        None comes back)."""
        try:
            return await anyio.to_thread.run_sync(in_transaction(work))
        except ValueError as exc:
            self.error = str(exc)
            return None

    # The new channel's fields: only a maintainer's form sends them.
    @rx.event
    def set_kind(self, kind: str) -> None:
        if self._maintainer() is not None:
            self.kind = one_of(kind, KINDS, "email")

    @rx.event
    def set_target(self, text: str) -> None:
        if self._maintainer() is not None:
            self.target = bounded(text, configure.TARGET_MAX + 1)  # one more: too long is refused, not cut

    @rx.event
    def set_secret(self, text: str) -> None:
        if self._maintainer() is not None:
            self.secret = bounded(text, SECRET_MAX + 1)

    @rx.event
    def set_channel_project(self, choice: str) -> None:
        if self._maintainer() is not None:
            self.channel_project = one_of(choice, self.scopes, EVERY)

    @rx.event
    async def add_channel(self) -> None:
        if not self._may_change():
            return
        kind, target, project_id = self.kind, self.target, project_of(self.channel_project)
        secret = self.secret if kind == "json" else ""
        can_mail = bool(SETTINGS.smtp_url and SETTINGS.alert_from)
        added = await self._change(
            lambda c: configure.add_channel(c, kind, target, secret, project_id, time.time(), can_mail))
        if added is not None:
            self.target = self.secret = ""
            self.secret_once = added.secret_once
            self.notice = "Channel added."
        await self._show()

    @rx.event
    async def remove_channel(self, channel_id: int) -> None:
        if self._may_change() and self._known(channel_id):
            await self._change(lambda c: configure.remove_channel(c, channel_id))
            self.notice = "" if self.error else "Channel removed."
        await self._show()

    @rx.event
    async def toggle_channel(self, channel_id: int, enabled: bool) -> None:
        if self._may_change() and self._known(channel_id):
            if not isinstance(enabled, bool):
                self.error = "A channel is switched on or off."
            else:
                await self._change(lambda c: configure.switch_channel(c, channel_id, enabled))
        await self._show()

    @rx.event
    async def send_test(self, channel_id: int) -> None:
        if self._may_change() and self._known(channel_id):
            if await self._change(lambda c: configure.queue_test(c, channel_id, time.time())) is not None:
                self.notice = "Test alert queued: the channel's last delivery or last error shows how it went."
        await self._show()

    def _known(self, channel_id: object) -> bool:
        if whole(channel_id) and 0 < channel_id < 2**63:
            return True
        self.error = configure.NO_CHANNEL
        return False

    # The rules form: any allowed client may pick whose rules it sees; only a maintainer edits.
    @rx.event
    async def choose_rules_project(self, choice: str) -> None:
        if not self._allowed():
            return
        self.rules_project = one_of(choice, self.projects, self.rules_project)
        self.rules_read = ""
        await self._read()

    @rx.event
    def set_rule(self, name: str, on: bool) -> None:
        if self._maintainer() is not None and name in SWITCHES and isinstance(on, bool):
            setattr(self, name, on)

    @rx.event
    def set_rule_number(self, name: str, text: str) -> None:
        if self._maintainer() is not None and name in NUMBERS:
            setattr(self, name, bounded(text, NUMBER_DIGITS + 1))

    @rx.event
    async def save_rules(self) -> None:
        if not self._may_change():
            return
        project_id = project_of(self.rules_project)
        numbers = [getattr(self, name).strip() for name in NUMBERS]
        if project_id is None:
            self.error = configure.NO_PROJECT
        elif not all(0 < len(n) <= NUMBER_DIGITS and n.isascii() and n.isdigit() for n in numbers):
            self.error = "The spike's events and minutes and the quiet period are whole numbers."
        else:
            rules = Rules(self.new_issue, self.regression, self.spike, *(int(n) for n in numbers))
            await self._change(lambda c: configure.save_rules(c, project_id, rules))
            if not self.error:
                self.notice = f"Rules saved for {self.rules_project}."
                self.rules_read = ""  # read back as stored
        await self._show()
