"""The /issue page's triage sections (state: app/pages/issue_triage_state.py): the assignee, the
activity timeline with its comments, and the merged hashes. A viewer reads them; the forms and buttons
show for a maintainer only (each handler checks again). Every string is rendered as text."""

from __future__ import annotations

import reflex as rx

from app.components.forms import native_select
from app.inbox.activity import MAX_COMMENT
from app.pages.issue_state import IssueState
from app.pages.issue_triage_state import COMMENT_BODY, NOBODY
from app.presentation.words import count_of


def assignment() -> rx.Component:
    """Who the issue is assigned to: a select of the users for a maintainer, text for a viewer."""
    return rx.hstack(
        rx.text("Assigned to", size="2"),
        rx.cond(
            IssueState.may_change,
            native_select(IssueState.assignable, IssueState.assignee, IssueState.assign, "issue-assignee"),
            rx.text(IssueState.assignee, size="2", weight="bold", id="issue-assignee-name",
                    color=rx.cond(IssueState.assignee == NOBODY, "var(--gray-10)", "var(--gray-12)")),
        ),
        align="center", spacing="2",
    )


def _comment_form() -> rx.Component:
    return rx.form(
        rx.vstack(
            rx.text_area(name="body", id=COMMENT_BODY, placeholder="Add a comment…", max_length=MAX_COMMENT, rows="3",
                         width="100%"),
            rx.button("Comment", type="submit", size="1", id="issue-comment-add"),
            align="end", width="100%", spacing="2",
        ),
        on_submit=IssueState.add_comment, width="100%", id="issue-comment-form",
    )


def _comment_editor(row: rx.Var) -> rx.Component:
    return rx.form(
        rx.vstack(
            rx.text_area(name="body", default_value=row.body, max_length=MAX_COMMENT, rows="3", width="100%",
                         class_name="issue-comment-edit-body"),
            rx.hstack(
                rx.button("Save", type="submit", size="1", id="issue-comment-save"),
                rx.button("Cancel", type="button", size="1", variant="soft", on_click=IssueState.cancel_edit),
                spacing="2",
            ),
            align="end", width="100%", spacing="2",
        ),
        on_submit=IssueState.save_edit, width="100%",
    )


def _comment(row: rx.Var) -> rx.Component:
    """A comment's text (or that it was deleted), with Edit and Delete for its author."""
    return rx.cond(
        IssueState.editing == row.comment_id,
        _comment_editor(row),
        rx.vstack(
            rx.cond(row.body != "",
                    rx.text(row.body, size="2", white_space="pre-wrap", class_name="issue-comment-body"),
                    rx.text("(deleted)", size="2", color_scheme="gray")),
            rx.cond(row.own, rx.hstack(
                rx.button("Edit", on_click=IssueState.start_edit(row.comment_id), size="1", variant="ghost",
                          class_name="issue-comment-edit"),
                rx.button("Delete", on_click=IssueState.delete_comment(row.comment_id), size="1", variant="ghost",
                          color_scheme="red", class_name="issue-comment-delete"),
                spacing="3",
            )),
            spacing="1", width="100%",
        ),
    )


def _entry(row: rx.Var) -> rx.Component:
    return rx.box(
        rx.hstack(
            rx.badge(row.kind, variant="soft", color_scheme=rx.cond(row.kind == "comment", "blue", "gray")),
            rx.text(rx.text.strong(row.actor), " ", row.text, size="2"),
            rx.text(row.when, size="1", color_scheme="gray", white_space="nowrap"),
            align="center", spacing="2", wrap="wrap",
        ),
        rx.cond(row.comment_id > 0, rx.box(_comment(row), padding_left="1em", margin_top="0.25em", width="100%")),
        class_name=rx.cond(row.kind == "comment", "issue-change issue-comment", "issue-change"),
        width="100%", padding_y="0.25em",
    )


def activity() -> rx.Component:
    """The comment form (a maintainer's) above the timeline, newest first."""
    return rx.vstack(
        rx.heading("Activity", size="4"),
        rx.cond(IssueState.may_change, _comment_form()),
        rx.foreach(IssueState.timeline, _entry),
        rx.cond(IssueState.timeline.length() == 0, rx.text("Nothing has happened to this issue yet.", size="2",
                                                           color_scheme="gray")),
        width="100%", spacing="2", id="issue-timeline",
    )


def merged_hashes() -> rx.Component:
    """The issue's grouping hashes with their stored events; Unmerge for a maintainer, not for the last one."""
    return rx.cond(IssueState.hashes.length() > 0, rx.vstack(
        rx.heading("Merged fingerprints", size="4"),
        rx.table.root(rx.table.body(rx.foreach(IssueState.hashes, lambda h: rx.table.row(
            rx.table.cell(rx.code(h.fingerprint, size="1")),
            rx.table.cell(rx.text(count_of(h.events, "event"), size="2", white_space="nowrap")),
            rx.table.cell(rx.cond(IssueState.may_change & h.movable, rx.button(
                "Unmerge", on_click=IssueState.unmerge(h.fingerprint), size="1", variant="soft", class_name="issue-unmerge",
            ))),
            class_name="issue-hash",
        ))), width="100%", size="1"),
        width="100%", spacing="2", id="issue-hashes",
    ))
