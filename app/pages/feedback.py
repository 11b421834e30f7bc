"""`/feedback`: what users wrote (Sentry's feedback widget or `captureFeedback`, and the older user
reports), newest first, of every project unless the select (shown when several projects have
feedback) or the URL names one (`/feedback?project=2`); each with who wrote it and when, the page it
was sent from and the release, as text, and a link to the issue of the event it is about when that
event is stored. A full page links to the older feedback (`?before=<id>`). It re-reads itself every
2 s while open.

Every handler is a public endpoint: it checks access itself; the URL's numbers are read as digits or
not at all, and the select's choice only when it is one it offers."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.forms import native_select
from app.components.page import page_at
from app.components.trace_filters import ANY_PROJECT, project_options
from app.console.form_state import project_of, row_id
from app.console.state import ConsoleState, ago, inbox_reader, one_of

TITLE = "Feedback · Lookout"
SHOWN = 100
EMPTY = ("No feedback to show. What users send with Sentry's feedback widget or captureFeedback (or an older SDK's "
         "user report) shows up here, newest first.")


def read_feedback(project_id: int | None, before_id: int | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The newest feedback of the project (None: of every project) before `before_id`, and the
    projects that have any (blocking)."""
    reader = inbox_reader()
    return reader.feedback_list(project_id, SHOWN, before_id), reader.feedback_projects()


def feedback_url(project: str = "", before: str = "") -> str:
    """The page's URL for a project's feedback ("": every project's), older than `before` ("": the newest)."""
    wanted = {name: value for name, value in (("project", project), ("before", before)) if value}
    return f"{routes.FEEDBACK}?{urlencode(wanted)}" if wanted else routes.FEEDBACK


def feedback_fields(found: dict[str, Any], now: float) -> dict[str, str]:
    """One piece of feedback as the page shows it: every string from outside as text."""
    issue_id = found["issue_id"]
    return {
        "message": found["message"], "who": " · ".join(filter(None, (found["name"], found["email"]))) or "someone",
        "when": ago(found["received_at"], now), "url": found["url"], "release": found["release"],
        "issue": f"{routes.ISSUE}?id={issue_id}" if issue_id is not None else "", "issue_title": found["issue_title"],
    }


class FeedbackState(ConsoleState, rx.State):
    live_route = routes.FEEDBACK
    rows: list[dict[str, str]] = []
    searched: bool = False  # read once (until then no empty state is shown)
    project: str = ""  # the project's id ("": every project), from the URL
    project_list: list[str] = [ANY_PROJECT]
    project_choice: str = ANY_PROJECT
    older: str = ""  # the URL of the feedback before the last shown ("" when the page is not full)
    newest: str = ""  # the URL of the newest feedback, when an older page is shown

    async def _read(self) -> None:
        parameters = self.router.url.query_parameters
        project_id, before_id = row_id(parameters.get("project")), row_id(parameters.get("before"))
        found, projects = await anyio.to_thread.run_sync(read_feedback, project_id, before_id)
        self.project = str(project_id) if project_id is not None else ""
        self.project_list, self.project_choice = project_options(projects, self.project, "(no feedback)")
        now = time.time()
        self.rows = [feedback_fields(f, now) for f in found]
        self.older = feedback_url(self.project, str(found[-1]["id"])) if len(found) == SHOWN else ""
        self.newest = feedback_url(self.project) if before_id is not None else ""
        self.searched = True

    @rx.event
    def set_project(self, choice: str):  # noqa: ANN201 (a redirect to the page's URL)
        if not self._admit():
            return None
        project_id = project_of(one_of(choice, self.project_list, ANY_PROJECT))
        return rx.redirect(feedback_url(str(project_id) if project_id is not None else ""))


def feedback_row(row: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row["when"], white_space="nowrap"),
        rx.table.cell(rx.text(row["message"], class_name="feedback-message", white_space="pre-wrap"),
                      rx.text(row["who"], size="1", color_scheme="gray", class_name="feedback-who")),
        rx.table.cell(
            rx.cond(row["url"] != "", rx.text(row["url"], size="1", class_name="feedback-url", word_break="break-all")),
            rx.cond(row["release"] != "", rx.text("release ", row["release"], size="1", color_scheme="gray",
                                                  class_name="feedback-release")),
        ),
        rx.table.cell(rx.cond(row["issue"] != "", rx.link(row["issue_title"], href=row["issue"],
                                                          class_name="feedback-issue-link"))),
        class_name="feedback-row",
    )


@page_at(routes.FEEDBACK, TITLE, on_load=FeedbackState.load, state=FeedbackState, heading="Feedback")
def page() -> rx.Component:
    return rx.vstack(
        rx.cond(FeedbackState.project_list.length() > 2, native_select(
            FeedbackState.project_list, FeedbackState.project_choice, FeedbackState.set_project, "feedback-project")),
        rx.cond(FeedbackState.rows.length() > 0, rx.table.root(
            rx.table.header(rx.table.row(*(rx.table.column_header_cell(label)
                                           for label in ("When", "What they wrote", "Page and release", "Issue")))),
            rx.table.body(rx.foreach(FeedbackState.rows, feedback_row)),
            width="100%", id="feedback-table",
        )),
        rx.cond(FeedbackState.searched & (FeedbackState.rows.length() == 0),
                rx.text(EMPTY, size="2", color_scheme="gray", id="feedback-empty")),
        rx.hstack(
            rx.cond(FeedbackState.newest != "", rx.link("Newest", href=FeedbackState.newest, id="feedback-newest")),
            rx.cond(FeedbackState.older != "", rx.link("Older", href=FeedbackState.older, id="feedback-older")),
            spacing="4",
        ),
        width="100%",
    )
