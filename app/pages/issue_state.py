"""The /issue page's state: one issue as an allowed client sees it (its counts, status, history,
and one stored event as display rows: app/presentation/), which event and frames are shown, and a
maintainer's changes (status, delete) through app/ingest/store.py."""

from __future__ import annotations

import time

import anyio.to_thread
import reflex as rx

from app import db, routes
from app.console.state import ConsoleState, ago, inbox_reader, one_of
from app.inbox import states
from app.ingest.store import InboxStore
from app.presentation import event as present, stack as present_stack
from app.protocol.fields import whole


def issue_number(text: object) -> int:
    """An issue id from the page's query (0 when it is not a plain number of at most 18 digits)."""
    return int(text) if isinstance(text, str) and 0 < len(text) <= 18 and text.isascii() and text.isdigit() else 0


class IssueState(ConsoleState, rx.State):
    found: bool = False
    message: str = ""
    issue_id: int = 0
    title: str = ""
    culprit: str = ""
    level: str = ""
    status: str = ""
    count: str = ""
    first_seen: str = ""
    last_seen: str = ""
    stack: list[present_stack.StackRow] = []
    has_minified: bool = False  # the event kept the browser's minified frames: the switch is offered
    frames_view: str = present_stack.ORIGINAL
    opened_folds: list[int] = []  # the library folds shown open
    breadcrumbs: list[dict[str, str]] = []
    tags: list[tuple[str, str]] = []
    contexts: list[tuple[str, str]] = []
    history: list[dict[str, str]] = []
    breakdown: list[tuple[str, str]] = []
    feedback: list[dict[str, str]] = []
    position: int = 0  # which stored event is shown: 0 the latest
    stored: int = 0  # how many events of the issue are stored
    event_id: str = ""  # the one shown

    async def _read(self) -> None:
        wanted = issue_number(self.router.url.query_parameters.get("id", ""))
        if wanted != self.issue_id:
            self.issue_id, self.position, self.opened_folds = wanted, 0, []
        issue = await anyio.to_thread.run_sync(inbox_reader().issue, self.issue_id)
        self.found = issue is not None
        if issue is None:
            return
        now = time.time()
        self.title, self.culprit, self.level = issue["title"], issue["culprit"], issue["level"]
        self.status, self.count = issue["status"], str(issue["event_count"])
        self.first_seen, self.last_seen = ago(issue["first_seen"], now), ago(issue["last_seen"], now)
        found = await anyio.to_thread.run_sync(inbox_reader().issue_event, self.issue_id, self.position)
        event, self.stored = found if found else ({}, 0)
        self.event_id = str(event.get("event_id", ""))
        self.breakdown = await anyio.to_thread.run_sync(inbox_reader().tag_breakdown, self.issue_id)
        self.feedback = [{
            "when": ago(f["received_at"], now), "who": " ".join(filter(None, (f["name"], f["email"]))) or "someone",
            "message": f["message"],
        } for f in await anyio.to_thread.run_sync(inbox_reader().feedback, self.issue_id)]
        self.has_minified = present_stack.has_minified(event)
        if not self.has_minified:
            self.frames_view = present_stack.ORIGINAL
        self.stack = present_stack.stack_rows(event, self.frames_view, set(self.opened_folds))
        self.breadcrumbs = present.breadcrumb_rows(event)
        self.tags = present.tag_rows(event)
        self.contexts = present.context_rows(event)
        changes = await anyio.to_thread.run_sync(inbox_reader().history, self.issue_id)
        self.history = [{
            "when": ago(float(c["at"]), now), "actor": str(c["actor"]),
            "change": f"{c['from_status']} → {c['to_status']}", "note": str(c["note"]),
        } for c in changes]

    @rx.event
    async def turn(self, step: int) -> None:
        """Show an older (+1) or newer (-1) stored event."""
        if not self._admit():
            return
        if whole(step):
            self.position = min(max(0, self.position + step), max(0, self.stored - 1))
            self.opened_folds = []  # another event: other folds
        await self._read()

    @rx.event
    async def show_frames(self, view: str) -> None:
        """Show the original frames, or the minified ones as the browser sent them."""
        chosen = one_of(view, present_stack.VIEWS, present_stack.ORIGINAL)
        if chosen != self.frames_view:
            self.frames_view, self.opened_folds = chosen, []
        await self._show()

    @rx.event
    async def toggle_fold(self, fold: int) -> None:
        """Open or close a fold of library frames (its index among the stack's folds)."""
        if whole(fold) and 0 <= fold < present_stack.MAX_STACK_ROWS:
            self.opened_folds = sorted(set(self.opened_folds) ^ {fold})
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
            await anyio.to_thread.run_sync(lambda: InboxStore(db.engine()).delete_issue(self.issue_id, viewer.name))
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
        self.message = ""
        try:
            await anyio.to_thread.run_sync(
                lambda: InboxStore(db.engine()).change_status(self.issue_id, to_status, viewer.name, in_next_release)
            )
        except states.StateError as exc:
            self.message = str(exc)
        await self._read()
