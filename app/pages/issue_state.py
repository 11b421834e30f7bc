"""The /issue page's state: one issue as an allowed client sees it (its counts, status, releases, events
over time, tag distribution; one stored event as display rows: app/presentation/), which event, period
and frames are shown, and a maintainer's changes of status and delete through app/inbox/triage.py.
Assignment, comments, the timeline and unmerge: the mixin in app/pages/issue_triage_state.py.

Every handler is a public endpoint (app/console/state.py): it checks the client itself and bounds its
arguments (a whole step, a choice among the offered ones)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import reflex as rx

from app import routes
from app.console.state import ago, database, inbox_reader, one_of, triage
from app.inbox import issue_stats, states
from app.ingest.event_writer import trace_of
from app.pages.issue_rows import PERIODS, DistributionRow, chart_points, distribution_rows
from app.pages.issue_triage_state import IssueTriage, TriageView, read_triage
from app.presentation import event as present, stack as present_stack
from app.presentation.contexts import ContextRow, context_rows
from app.presentation.words import plural
from app.protocol.fields import whole

ENDS = ("latest", "oldest")


def issue_number(text: object) -> int:
    """An issue id from the page's query (0 when it is not a plain number of at most 18 digits)."""
    return int(text) if isinstance(text, str) and 0 < len(text) <= 18 and text.isascii() and text.isdigit() else 0


@dataclass(frozen=True)
class Read:
    """What one read of the page found (off the event loop): the issue, the event shown and how many are
    stored, the counts, and the triage side."""

    issue: dict[str, Any]
    event: dict[str, Any]
    stored: int
    position: int
    buckets: list[issue_stats.Bucket]
    tags: list[issue_stats.TagValues]
    releases: tuple[str, str]
    users: int
    feedback: list[dict[str, Any]]
    triage: TriageView


def read_issue(issue_id: int, position: int, period: str, author: str, now: float) -> Read | None:
    """The page's data (blocking); the event at `position` (0: the latest), or the latest when that one is gone."""
    reader, engine = inbox_reader(), database()
    issue = reader.issue(issue_id)
    if issue is None:
        return None
    found = reader.issue_event(issue_id, position)
    if found is None and position:
        position, found = 0, reader.issue_event(issue_id, 0)
    event, stored = found if found else ({}, 0)
    return Read(issue, event, stored, position, issue_stats.events_over_time(engine, issue_id, now, period),
                issue_stats.tag_distribution(engine, issue_id), issue_stats.releases(engine, issue_id),
                issue_stats.users_affected(engine, issue_id), reader.feedback(issue_id), read_triage(issue_id, author, now))


class IssueState(IssueTriage, rx.State):
    loaded: bool = False  # read once: until then the page says it is loading, not that there is no issue
    found: bool = False
    title: str = ""
    culprit: str = ""
    level: str = ""
    status: str = ""
    count: str = ""
    users: str = ""  # how many users were affected ("" when no event named one)
    first_seen: str = ""
    last_seen: str = ""
    first_release: str = ""
    last_release: str = ""
    period: str = PERIODS[0][0]  # of the chart: "24h" or "30d"
    chart: list[dict[str, Any]] = []  # {"label", "events"} per hour or day
    chart_total: str = ""
    distribution: list[DistributionRow] = []
    stack: list[present_stack.StackRow] = []
    has_minified: bool = False  # the event kept the browser's minified frames: the switch is offered
    frames_view: str = present_stack.ORIGINAL
    opened_folds: list[int] = []  # the library folds shown open
    toggled_frames: list[int] = []  # the frames opened or closed against their default
    breadcrumbs: list[dict[str, str]] = []
    tags: list[tuple[str, str]] = []
    contexts: list[ContextRow] = []
    feedback: list[dict[str, str]] = []
    position: int = 0  # which stored event is shown: 0 the latest
    stored: int = 0  # how many events of the issue are stored
    event_id: str = ""  # the one shown
    trace_href: str = ""  # the shown event's trace page ("" when it names no trace)

    async def _read(self) -> None:
        wanted = issue_number(self.router.url.query_parameters.get("id", ""))
        if wanted != self.issue_id:
            self.issue_id, self.position, self.opened_folds, self.editing = wanted, 0, [], 0
            self.toggled_frames = []
        now, author = time.time(), self._author()
        read = await anyio.to_thread.run_sync(read_issue, self.issue_id, self.position, self.period, author, now)
        self.loaded, self.found = True, read is not None
        if read is None:
            return
        issue = read.issue
        self.title, self.culprit, self.level = issue["title"], issue["culprit"], issue["level"]
        self.status, self.count = issue["status"], f"{issue['event_count']:,}"
        self.users = plural(read.users, "user") if read.users else ""
        self.first_seen, self.last_seen = ago(issue["first_seen"], now), ago(issue["last_seen"], now)
        self.first_release, self.last_release = read.releases
        self.chart = chart_points(read.buckets, self.period)
        self.chart_total = f"{sum(b.count for b in read.buckets):,}"
        self.distribution = distribution_rows(read.tags)
        self.feedback = [{
            "when": ago(f["received_at"], now), "who": " ".join(filter(None, (f["name"], f["email"]))) or "someone",
            "message": f["message"], "url": f["url"], "release": f["release"],
        } for f in read.feedback]
        self._show_event(read.event, read.stored, read.position)
        self._show_triage(read.triage)

    def _show_event(self, event: dict[str, Any], stored: int, position: int) -> None:
        if position != self.position:
            self.position, self.opened_folds, self.toggled_frames = position, [], []
        self.stored, self.event_id = stored, str(event.get("event_id", ""))
        trace_id = trace_of(event)
        self.trace_href = f"{routes.TRACE}?id={trace_id}" if trace_id else ""
        self.has_minified = present_stack.has_minified(event)
        if not self.has_minified:
            self.frames_view = present_stack.ORIGINAL
        self.stack = present_stack.stack_rows(event, self.frames_view, set(self.opened_folds), set(self.toggled_frames))
        self.breadcrumbs = present.breadcrumb_rows(event)
        self.tags = present.tag_rows(event)
        self.contexts = context_rows(event)

    @rx.event
    async def turn(self, step: int) -> None:
        """Show an older (+1) or newer (-1) stored event."""
        if not self._admit():
            return
        if whole(step):
            self._go(self.position + step)
        await self._read()

    @rx.event
    async def jump(self, end: str) -> None:
        """Show the latest or the oldest stored event."""
        if not self._admit():
            return
        if end in ENDS:
            self._go(0 if end == "latest" else self.stored - 1)
        await self._read()

    def _go(self, position: int) -> None:
        self.position = min(max(0, position), max(0, self.stored - 1))
        self.opened_folds, self.toggled_frames = [], []  # another event: other folds and frames

    @rx.event
    async def show_period(self, period: str) -> None:
        """Events over the last 24 hours (hourly) or 30 days (daily)."""
        self.period = one_of(period, [p for p, _ in PERIODS], self.period)
        await self._show()

    @rx.event
    async def show_frames(self, view: str) -> None:
        """Show the original frames, or the minified ones as the browser sent them."""
        chosen = one_of(view, present_stack.VIEWS, present_stack.ORIGINAL)
        if chosen != self.frames_view:
            self.frames_view, self.opened_folds, self.toggled_frames = chosen, [], []
        await self._show()

    @rx.event
    async def toggle_fold(self, fold: int) -> None:
        """Open or close a fold of library frames (its index among the stack's folds)."""
        if whole(fold) and 0 <= fold < present_stack.MAX_STACK_ROWS:
            self.opened_folds = sorted(set(self.opened_folds) ^ {fold})
        await self._show()

    @rx.event
    async def toggle_frame(self, number: int) -> None:
        """Open or close a frame's lines and variables (its number across the chain)."""
        if whole(number) and 0 <= number < present_stack.MAX_STACK_ROWS:
            self.toggled_frames = sorted(set(self.toggled_frames) ^ {number})
        await self._show()

    confirming_delete: bool = False

    @rx.event
    def ask_delete(self, asking: bool) -> None:
        if self._maintainer() is not None:
            self.confirming_delete = asking is True
        elif not self.refused:
            self.message = "Only a maintainer can delete an issue."

    @rx.event
    async def delete(self):  # noqa: ANN201 (an event handler's redirect)
        """Delete the issue for good (a maintainer only), then back to the list."""
        self.confirming_delete = False
        viewer = self._maintainer()
        if viewer is None:
            if not self.refused:
                self.message = "Only a maintainer can delete an issue."
            return None
        try:
            await anyio.to_thread.run_sync(lambda: triage().delete_issue(self.issue_id, viewer.name))
        except states.StateError as exc:
            self.message = str(exc)
            return None
        return rx.redirect(routes.ISSUES)

    @rx.event
    async def act(self, to_status: str, in_next_release: bool) -> None:
        viewer = self._maintainer()
        if viewer is None:
            if not self.refused:
                self.message = "Only a maintainer can change an issue's status."
            return
        if to_status not in states.ALLOWED or not isinstance(in_next_release, bool):
            self.message = "That is not a status an issue can move to."
            return
        self.message = self.notice = ""
        try:
            await anyio.to_thread.run_sync(
                lambda: triage().change_status(self.issue_id, to_status, viewer.name, in_next_release)
            )
        except states.StateError as exc:
            self.message = str(exc)
        await self._read()
