"""`/issue?id=N`: one issue: its counts and status, actions, history, and its latest event
(exception chain with frames, breadcrumbs, tags, contexts). Every string from the event is
rendered as text.

The stack view reads like Sentry's (rows from app/presentation/stack.py): in-app frames open with
their context lines, library frames folded (`toggle_fold` opens one), and a switch between the
original frames and the minified ones the browser sent (`show_frames`), offered when the event kept them."""

from __future__ import annotations

import time

import anyio.to_thread
import reflex as rx

from app import db, routes
from app.components.layout import layout
from app.components.refused import unless_refused
from app.console.state import ConsoleState, ago, inbox_reader, one_of
from app.inbox import states
from app.ingest.fields import whole
from app.ingest.store import InboxStore
from app.presentation import event as present
from app.presentation import stack as present_stack

TITLE = "Issue · Lookout"
# (button id, label, status it moves to, in the next release?, statuses it is offered in)
ACTIONS: list[tuple[str, str, str, bool, tuple[str, ...]]] = [
    ("issue-resolve", "Resolve", states.RESOLVED, False, states.OPEN),
    ("issue-resolve-next", "Resolve in next release", states.RESOLVED, True, states.OPEN),
    ("issue-ignore", "Ignore", states.IGNORED, False, states.OPEN),
    ("issue-reopen", "Reopen", states.UNRESOLVED, False, (states.RESOLVED,)),
    ("issue-unignore", "Stop ignoring", states.UNRESOLVED, False, (states.IGNORED,)),
]


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
    stack: list[dict[str, str]] = []
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


def _action(element_id: str, label: str, to_status: str, next_release: bool, offered: tuple[str, ...]) -> rx.Component:
    return rx.cond(
        rx.Var.create(list(offered)).contains(IssueState.status),
        rx.button(label, on_click=IssueState.act(to_status, next_release), id=element_id, variant="soft"),
    )


def stack_row(row: rx.Var[dict[str, str]]) -> rx.Component:
    """One row of present_stack.stack_rows: every string is a text child, never HTML."""
    return rx.match(
        row["kind"],
        ("exception", rx.heading(row["text"], size="3", margin_top="0.75em", class_name="stack-exception")),
        ("fold", rx.button(
            rx.cond(row["open"] == "yes", "▾ ", "▸ "), row["text"],
            on_click=IssueState.toggle_fold(row["fold"].to(int)), variant="ghost", size="1", margin_left="1em",
            custom_attrs={"aria-expanded": rx.cond(row["open"] == "yes", "true", "false")},
            class_name=rx.cond(row["open"] == "yes", "stack-library-fold open", "stack-library-fold"),
        )),
        ("context", rx.el.div(
            rx.el.span(row["number"], class_name="stack-context-number", display="inline-block", min_width="4em",
                       text_align="right", color="var(--gray-10)"),
            rx.el.span(rx.cond(row["marked"] == "yes", " → ", "   "), class_name="stack-context-marker"),
            rx.el.span(row["text"]),
            class_name=rx.cond(row["marked"] == "yes", "stack-context-line stack-context-current", "stack-context-line"),
            font_family="var(--code-font-family)", font_size="12px", white_space="pre", overflow_x="auto",
            padding_left="1em",
            background=rx.cond(row["marked"] == "yes", "var(--amber-a4)", "var(--gray-a2)"),
        )),
        ("more", rx.text(row["text"], size="2", color_scheme="gray", class_name="stack-more")),
        rx.box(
            rx.text(row["text"], size="2", weight=rx.cond(row["in_app"] == "yes", "bold", "regular"),
                    class_name=rx.cond(row["in_app"] == "yes", "stack-frame in-app",
                                       rx.cond(row["fold"] != "", "stack-frame library", "stack-frame"))),
            rx.cond(row["page"] != "", rx.text(row["page"], size="1", color_scheme="blue", class_name="stack-python-page")),
            rx.cond(row["error"] != "", rx.text(row["error"], size="1", color_scheme="orange",
                                                class_name="stack-sourcemap-error")),
            padding_left=rx.cond(row["fold"] != "", "2em", "1em"), margin_top="0.25em",
        ),
    )


def frames_switch() -> rx.Component:
    """Original / Minified, offered when the event kept the frames the browser sent."""
    def choice(view: str, label: str) -> rx.Component:
        return rx.button(label, on_click=IssueState.show_frames(view), size="1", id=f"stack-switch-{view}",
                         variant=rx.cond(IssueState.frames_view == view, "solid", "outline"))

    return rx.cond(IssueState.has_minified, rx.hstack(
        rx.text("Frames:", size="2"), choice(present_stack.ORIGINAL, "Original"), choice(present_stack.MINIFIED, "Minified"),
        align="center", spacing="2", id="stack-switch",
    ))


def page() -> rx.Component:
    return layout(
        rx.link("← Issues", href=routes.ISSUES),
        unless_refused(
            IssueState,
            rx.cond(
                IssueState.found,
                rx.vstack(
                    rx.heading(IssueState.title, size="6", id="page-title"),
                    rx.text(IssueState.culprit, color_scheme="gray", id="issue-culprit"),
                    rx.hstack(
                        rx.badge(IssueState.level), rx.badge(IssueState.status, id="issue-status"),
                        rx.text(IssueState.count, " events · first seen ", IssueState.first_seen,
                                " · last seen ", IssueState.last_seen, size="2"),
                        align="center", spacing="3",
                    ),
                    rx.hstack(
                        *[_action(*action) for action in ACTIONS],
                        rx.cond(
                            IssueState.confirming_delete,
                            rx.hstack(
                                rx.text("Delete this issue and its stored events for good?", size="2"),
                                rx.button("Delete", on_click=IssueState.delete, color_scheme="red", id="issue-delete-confirm"),
                                rx.button("Keep it", on_click=IssueState.ask_delete(False), variant="soft"),
                                align="center", spacing="2",
                            ),
                            rx.button("Delete…", on_click=IssueState.ask_delete(True), color_scheme="red",
                                      variant="soft", id="issue-delete"),
                        ),
                        spacing="2", wrap="wrap",
                    ),
                    rx.cond(IssueState.message != "", rx.callout(IssueState.message, color_scheme="orange")),
                    rx.cond(IssueState.feedback.length() > 0, rx.vstack(
                        rx.heading("What users said", size="4"),
                        rx.foreach(IssueState.feedback, lambda f: rx.box(
                            rx.text(f["message"], class_name="issue-feedback"),
                            rx.text(f["who"], " · ", f["when"], size="1", color_scheme="gray"),
                        )),
                    )),
                    rx.heading("Tags", size="4"),
                    rx.data_list.root(rx.foreach(IssueState.breakdown, lambda t: rx.data_list.item(
                        rx.data_list.label(t[0]), rx.data_list.value(t[1]),
                    )), id="issue-breakdown"),
                    rx.hstack(
                        rx.heading(rx.cond(IssueState.position == 0, "Latest event", "An earlier event"), size="4"),
                        rx.button("Newer", on_click=IssueState.turn(-1), disabled=IssueState.position == 0,
                                  variant="outline", size="1", id="issue-newer"),
                        rx.text((IssueState.position + 1).to_string(), " of ", IssueState.stored.to_string(), " stored",
                                size="2", id="issue-position"),
                        rx.button("Older", on_click=IssueState.turn(1),
                                  disabled=IssueState.position + 1 >= IssueState.stored, variant="outline", size="1",
                                  id="issue-older"),
                        align="center", spacing="3",
                    ),
                    rx.text("Event ", rx.code(IssueState.event_id, id="issue-event-id"), " (",
                            rx.el.a("JSON", href="/api/inbox/events/" + IssueState.event_id), ")", size="2"),
                    frames_switch(),
                    rx.box(rx.foreach(IssueState.stack, stack_row), id="issue-stack", width="100%"),
                    rx.heading("Breadcrumbs", size="4"),
                    rx.table.root(rx.table.body(rx.foreach(IssueState.breadcrumbs, lambda b: rx.table.row(
                        rx.table.cell(b["time"]), rx.table.cell(b["category"]), rx.table.cell(b["level"]),
                        rx.table.cell(b["message"]),
                    ))), id="issue-breadcrumbs", width="100%"),
                    rx.heading("This event's tags", size="4"),
                    rx.data_list.root(rx.foreach(IssueState.tags, lambda t: rx.data_list.item(
                        rx.data_list.label(t[0]), rx.data_list.value(t[1]),
                    )), id="issue-tags"),
                    rx.heading("Contexts", size="4"),
                    rx.data_list.root(rx.foreach(IssueState.contexts, lambda c: rx.data_list.item(
                        rx.data_list.label(c[0]), rx.data_list.value(rx.code(c[1], size="1")),
                    )), id="issue-contexts"),
                    rx.heading("History", size="4"),
                    rx.foreach(IssueState.history, lambda h: rx.text(
                        h["when"], " · ", h["actor"], " · ", h["change"], " ", h["note"], size="2", class_name="issue-change",
                    )),
                    width="100%", spacing="3",
                ),
                rx.text("There is no such issue.", id="issue-missing"),
            ),
        ),
    )
