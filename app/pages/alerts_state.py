"""The /alerts page's state: the channels and projects as an allowed client sees them, the new
channel and the rules form as a maintainer types them, and the changes (app/alerts/configure.py).

Every handler is a public endpoint (app/console/state.py): it reads through `_show()`, changes
something only for `_maintainer()`, and takes each argument as possibly anything: bounded text, a
choice among the offered ones, a whole number (`fields.whole`), a real bool. A refusal is a
sentence in `error`."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
import reflex as rx
import sqlalchemy

from app import routes
from app.alerts import configure
from app.alerts.alert import KINDS
from app.alerts.channels import SECRET_MAX
from app.alerts.rules import BOUNDS, SWITCHES, Rules
from app.console.form_state import FormState, choice_of, is_row_id, project_of
from app.console.state import ago, database, one_of
from app.settings import SETTINGS

EVERY = "every project"
NUMBERS = tuple(BOUNDS)  # spike_events, spike_minutes, quiet_minutes
NUMBER_DIGITS = 9  # a rule's number as typed: at most this many characters
MAINTAINERS_ONLY = "Only a maintainer can change alerts."
T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class ChannelRow:
    """One channel as the page shows it (masked: app/alerts/configure.py); the page words the two
    flags ("on"/"off", "environment"/"console") and offers Remove only for a console channel."""

    id: int
    kind: str
    target: str
    secret: str  # a json channel's: "set" or "none" ("" for the other kinds)
    project: str  # EVERY, or one of the page's projects
    from_environment: bool  # configured in the environment: not removable here
    enabled: bool
    last_delivery: str  # "never", or how long ago
    last_error: str
    last_error_when: str  # how long ago ("" when there is no error)


def channel_row(view: configure.ChannelView, names: dict[int, str], now: float) -> ChannelRow:
    scope = EVERY if view.project_id is None else choice_of(view.project_id, names.get(view.project_id, "(gone)"))
    return ChannelRow(
        id=view.id, kind=view.kind, target=view.target, secret=view.secret if view.kind == "json" else "",
        project=scope, from_environment=view.origin == "env", enabled=view.enabled,
        last_delivery="never" if view.last_delivery_at is None else ago(view.last_delivery_at, now),
        last_error=view.last_error,
        last_error_when="" if view.last_error_at is None else ago(view.last_error_at, now),
    )


def in_transaction(work: Callable[[sqlalchemy.Connection], T]) -> Callable[[], T]:
    def run() -> T:
        with database().begin() as connection:
            return work(connection)
    return run


class AlertsState(FormState, rx.State):
    live_route = routes.ALERTS
    maintainers_only = MAINTAINERS_ONLY
    # The secret made for a json channel, and a webhook URL and secret being typed (a URL is a secret too).
    unpersisted = ("secret_once", "target", "secret")
    channels: list[ChannelRow] = []
    scopes: list[str] = [EVERY]  # a channel's: EVERY, or one of `projects`
    # The new channel, as typed.
    kind: str = "email"
    target: str = ""
    secret: str = ""
    channel_project: str = EVERY
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
        self._reading(self._viewer())
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

    @rx.event
    async def load(self):  # noqa: ANN201 (the watcher, as ConsoleState.load returns it)
        self.rules_read = ""  # a new visit shows the rules as saved
        return await FormState.load(self)

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

    # The new channel's fields: only a maintainer's form sends them.
    @rx.event
    def set_kind(self, kind: str) -> None:
        self._pick("kind", kind, KINDS, "email")

    @rx.event
    def set_target(self, text: str) -> None:
        self._type("target", text, configure.TARGET_MAX)

    @rx.event
    def set_secret(self, text: str) -> None:
        self._type("secret", text, SECRET_MAX)

    @rx.event
    def set_channel_project(self, choice: str) -> None:
        self._pick("channel_project", choice, self.scopes, EVERY)

    @rx.event
    async def add_channel(self) -> None:
        if self._begin_change() is None:
            return
        kind, target, project_id = self.kind, self.target, project_of(self.channel_project)
        secret = self.secret if kind == "json" else ""
        added = await self._change(in_transaction(
            lambda c: configure.add_channel(c, kind, target, secret, project_id, time.time(), SETTINGS.can_mail)))
        if added is not None:
            self.target = self.secret = ""
            self.secret_once = added.secret_once
            self.notice = "Channel added."
        await self._show()

    @rx.event
    async def remove_channel(self, channel_id: int) -> None:
        if await self._on_channel(channel_id, configure.remove_channel):
            self.notice = "Channel removed."
        await self._show()

    @rx.event
    async def toggle_channel(self, channel_id: int, enabled: bool) -> None:
        await self._on_channel(channel_id, lambda c, known: configure.switch_channel(c, known, enabled),
                               refusal="" if isinstance(enabled, bool) else "A channel is switched on or off.")
        await self._show()

    @rx.event
    async def send_test(self, channel_id: int) -> None:
        if await self._on_channel(channel_id, lambda c, known: configure.queue_test(c, known, time.time())):
            self.notice = "Test alert queued: the channel's last delivery or last error shows how it went."
        await self._show()

    async def _on_channel(self, channel_id: object, work: Callable[[sqlalchemy.Connection, int], object],
                          refusal: str = "") -> bool:
        """A maintainer's change to one channel, in one transaction: whether it was made (if not,
        `error` says why; `refusal`: a sentence for an argument found wrong beforehand)."""
        if self._begin_change() is None:
            return False
        if not is_row_id(channel_id):
            self.error = configure.NO_CHANNEL
        elif refusal:
            self.error = refusal
        else:
            known = int(channel_id)  # type: ignore[call-overload]  # is_row_id: a whole number
            await self._change(in_transaction(lambda c: work(c, known)))
        return not self.error

    # The rules form: any allowed client may pick whose rules it sees; only a maintainer edits.
    @rx.event
    async def choose_rules_project(self, choice: str) -> None:
        if not self._admit():
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
        if name in NUMBERS:
            self._type(name, text, NUMBER_DIGITS)

    @rx.event
    async def save_rules(self) -> None:
        if self._begin_change() is None:
            return
        project_id = project_of(self.rules_project)
        numbers = [getattr(self, name).strip() for name in NUMBERS]
        if project_id is None:
            self.error = configure.NO_PROJECT
        elif not all(0 < len(n) <= NUMBER_DIGITS and n.isascii() and n.isdigit() for n in numbers):
            self.error = "The spike's events and minutes and the quiet period are whole numbers."
        else:
            rules = Rules(self.new_issue, self.regression, self.spike, *(int(n) for n in numbers))
            await self._change(in_transaction(lambda c: configure.save_rules(c, project_id, rules)))
            if not self.error:
                self.notice = f"Rules saved for {self.rules_project}."
                self.rules_read = ""  # read back as stored
        await self._show()
