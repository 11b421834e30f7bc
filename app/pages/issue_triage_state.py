"""The /issue page's triage, as a mixin of its state (app/pages/issue_state.py): who the issue is
assigned to, the timeline of its changes and comments, and its merged hashes, read for an allowed
client; assigning, commenting and unmerging for a maintainer, through app/inbox/triage.py.

Every handler is a public endpoint (app/console/state.py): it checks the client first (`_begin`: a
maintainer), then takes each argument as possibly anything (a row id, text bounded by its length) and
answers a refusal with a sentence in `message`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import reflex as rx
from sqlalchemy import select

from app.console.accounts import Viewer
from app.console.form_state import is_row_id
from app.console.state import ConsoleState, bounded, database, triage
from app.inbox.activity import MAX_COMMENT
from app.inbox.states import StateError
from app.inbox.tables import ISSUES
from app.inbox.triage import Triage
from app.pages.issue_rows import HashRow, TimelineRow, timeline_rows

NOBODY = "nobody"
MAINTAINERS_ONLY = "Only a maintainer can assign, comment or unmerge."
NOT_YOURS = "Only its author can change a comment."
COMMENT_BODY = "issue-comment-body"  # the new comment's text area
FINGERPRINT_LENGTH = 64  # sha256 hex
MAX_NAME = 200  # characters of an assignee's name a client sends


@dataclass(frozen=True)
class TriageView:
    assignee: str
    assignable: list[str]
    timeline: list[TimelineRow]
    hashes: list[HashRow]


def read_triage(issue_id: int, author: str, now: float) -> TriageView:
    """The triage side of the page (blocking: run it off the event loop); `author`: the client's name when
    it may write (its comments can be edited), else ""."""
    work = triage()
    with database().connect() as connection:
        assignee = connection.execute(select(ISSUES.c.assignee).where(ISSUES.c.id == issue_id)).scalar() or ""
    found = work.hashes(issue_id)
    return TriageView(
        assignee=assignee or NOBODY,
        assignable=[NOBODY, *sorted({*work.assignable(), assignee} - {"", NOBODY})],
        timeline=timeline_rows(work.timeline(issue_id), author, now),
        hashes=[HashRow(fingerprint, events, len(found) > 1 and events > 0) for fingerprint, events in found],
    )


class IssueTriage(ConsoleState, mixin=True):
    issue_id: int = 0
    message: str = ""  # the last refusal, a sentence
    notice: str = ""  # what the last change did
    may_change: bool = False  # a maintainer (or this machine): the forms show
    assignee: str = NOBODY
    assignable: list[str] = [NOBODY]
    timeline: list[TimelineRow] = []
    hashes: list[HashRow] = []
    editing: int = 0  # the comment being edited (0: none)

    def _author(self) -> str:
        """Who the client writes as ("" when it may not write), and whether the forms show."""
        found = self._viewer()
        self.may_change = found is not None and found.may_change
        return found.name if found is not None and self.may_change else ""

    def _show_triage(self, view: TriageView) -> None:
        self.assignee, self.assignable, self.timeline, self.hashes = view.assignee, view.assignable, view.timeline, view.hashes
        if not any(row.own and row.comment_id == self.editing for row in self.timeline):
            self.editing = 0

    def _begin(self) -> Viewer | None:
        """Start a change: the last change's sentences go; the maintainer, or None with the refusal said."""
        self.message = self.notice = ""
        maintainer = self._maintainer()
        if maintainer is None and not self.refused:
            self.message = MAINTAINERS_ONLY
        return maintainer

    async def _apply(self, work: Callable[[Triage], Any]) -> list[Any]:
        """Run a change off the event loop, then read the page again: [what it returned], or [] when it
        was refused (its sentence in `message`)."""
        try:
            done = [await anyio.to_thread.run_sync(lambda: work(triage()))]
        except StateError as exc:
            self.message, done = str(exc), []
        await self._show()
        return done

    @rx.event
    async def assign(self, choice: str) -> None:
        """Assign the issue to a user (Triage checks there is one), or to nobody."""
        maintainer = self._begin()
        if maintainer is None:
            return
        assignee = "" if choice == NOBODY else bounded(choice, MAX_NAME)
        if await self._apply(lambda t: t.assign(self.issue_id, assignee, maintainer.name)):
            self.notice = f"Assigned to {assignee}." if assignee else "Assigned to nobody."

    @rx.event
    async def add_comment(self, form: dict[str, Any]):  # noqa: ANN201 (an event that clears the text area)
        maintainer = self._begin()
        body = _body(form)
        if maintainer is None or not self._fits(body):
            return None
        if await self._apply(lambda t: t.add_comment(self.issue_id, maintainer.name, body)):
            return rx.set_value(COMMENT_BODY, "")
        return None

    @rx.event
    async def start_edit(self, comment_id: int) -> None:
        """Open the editor of one of the client's own comments."""
        if self._begin() is None:
            return
        await self._show()
        if is_row_id(comment_id) and any(row.own and row.comment_id == comment_id for row in self.timeline):
            self.editing = comment_id
        else:
            self.message = NOT_YOURS

    @rx.event
    def cancel_edit(self) -> None:
        if self._admit():  # changes nothing stored, but each handler applies the access rule
            self.editing = 0

    @rx.event
    async def save_edit(self, form: dict[str, Any]) -> None:
        maintainer, body, comment_id = self._begin(), _body(form), self.editing
        if maintainer is None or not comment_id or not self._fits(body):
            return
        if await self._apply(lambda t: t.edit_comment(comment_id, maintainer.name, body)):
            self.editing, self.notice = 0, "Comment saved."

    @rx.event
    async def delete_comment(self, comment_id: int) -> None:
        maintainer = self._begin()
        if maintainer is None:
            return
        if not is_row_id(comment_id):
            self.message = "There is no such comment."
            return
        if await self._apply(lambda t: t.delete_comment(comment_id, maintainer.name)):
            self.notice = "Comment deleted."

    @rx.event
    async def unmerge(self, fingerprint: str) -> None:
        """Move one of the issue's hashes, with its stored events, to a new issue of its own."""
        maintainer = self._begin()
        if maintainer is None:
            return
        wanted = bounded(fingerprint, FINGERPRINT_LENGTH)
        moved = await self._apply(lambda t: t.unmerge(self.issue_id, wanted, maintainer.name))
        if moved:
            self.notice = f"Hash {wanted[:12]} moved to issue {moved[0]}."

    def _fits(self, body: str) -> bool:
        """Whether a comment is short enough to be sent on (Triage words the other refusals)."""
        if len(body.strip()) > MAX_COMMENT:
            self.message = f"A comment holds 1 to {MAX_COMMENT:,} characters; this one has {len(body.strip()):,}."
            return False
        return True


def _body(form: object) -> str:
    """The comment text a form sent ("" for anything else)."""
    body = form.get("body") if isinstance(form, dict) else None
    return body if isinstance(body, str) else ""
