"""`/issues`: the inbox's issues for a search in Sentry's syntax (docs/search.md), kept in the URL;
saved and pinned searches; bulk actions on a selection or on every match. New events show up
without a reload: while the page is open it re-reads the list every 2 s."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.components.badges import level_badge, status_badge
from app.components.forms import native_select, outcome, select_style
from app.components.page import page_at
from app.pages.issues_bulk import IGNORE_FOR, IGNORE_UNTIL
from app.pages.issues_state import SORTS, IssueRow, IssuesState, SavedRow
from app.presentation.words import noun, noun_of

TITLE = "Issues · Lookout"
HEADERS = ("Issue", "Level", "Status", "Assignee", "Events", "Last 24 h", "Last seen")
IGNORE_CHOICES = [("ignore", "Ignore for good"), *((k, f"Ignore for {k.split('_')[1]}") for k in IGNORE_FOR),
                  *((k, f"Ignore until {n} more {noun(n, 'event')}") for k, n in IGNORE_UNTIL.items())]


def search_bar() -> rx.Component:
    return rx.form(
        rx.hstack(
            # Not bound to the state as it is typed: the URL's search is the box's text, and a new URL
            # (a search, Back) makes a new box (`key`) showing its own.
            rx.input(name="query", default_value=IssuesState.query, key=IssuesState.query,
                     placeholder="is:unresolved browser.name:Chrome …", id="issues-search", width="32em"),
            rx.button("Search", type="submit", id="issues-search-go"),
            native_select(list(SORTS), IssuesState.sort, IssuesState.set_sort, "issues-sort"),
            rx.cond(IssuesState.project_list.length() > 2,
                    native_select(IssuesState.project_list, IssuesState.project_choice, IssuesState.set_project,
                                  "issues-project")),
            rx.text(IssuesState.total.to_string(), rx.cond(IssuesState.capped, "+", ""), " ",
                    noun_of(IssuesState.total, "issue"), id="issues-total"),
            align="center", spacing="3", wrap="wrap",
        ),
        on_submit=IssuesState.search, reset_on_submit=False,
    )


def saved_link(saved: rx.Var[SavedRow]) -> rx.Component:
    return rx.hstack(
        rx.link(saved.name, href=saved.href, class_name="saved-search"),
        rx.cond(saved.pinned, rx.badge("pinned", size="1")),
        rx.icon_button("x", size="1", variant="ghost", on_click=IssuesState.delete_saved(saved.id),
                       aria_label="Delete this saved search", class_name="saved-search-delete"),
        spacing="1", align="center",
    )


def saved_searches() -> rx.Component:
    return rx.hstack(
        rx.text("Saved:", size="2", color_scheme="gray"),
        rx.foreach(IssuesState.saved, saved_link),
        rx.form(
            rx.hstack(
                rx.input(name="name", placeholder="Name this search", id="issues-save-name", size="1", width="12em"),
                rx.cond(IssuesState.may_change, rx.el.label(
                    rx.el.input(type="checkbox", name="pinned", id="issues-save-pinned"), " for everyone")),
                rx.button("Save search", type="submit", size="1", variant="outline", id="issues-save"),
                align="center", spacing="2",
            ),
            on_submit=IssuesState.save_search, reset_on_submit=True,
        ),
        align="center", spacing="3", wrap="wrap", id="issues-saved",
    )


def bulk_button(label: str, action: str, element_id: str, variant: str = "outline", **props: str) -> rx.Component:
    on_click = IssuesState.bulk(action)  # type: ignore[misc]  # Reflex types a background handler as not callable; calling it makes its event
    return rx.button(label, on_click=on_click, size="1", variant=variant, id=element_id, disabled=IssuesState.working, **props)


def bulk_bar() -> rx.Component:
    assign = rx.el.select(
        rx.el.option("Assign to…", value=""),
        rx.el.option("nobody", value="unassign"),
        rx.foreach(IssuesState.assignable, lambda name: rx.el.option(name, value="assign:" + name)),
        value="", on_change=IssuesState.bulk, id="bulk-assign", style=select_style("1"),
    )
    ignore = rx.el.select(
        rx.el.option("Ignore…", value=""),
        *[rx.el.option(label, value=key) for key, label in IGNORE_CHOICES],
        value="", on_change=IssuesState.bulk, id="bulk-ignore", style=select_style("1"),
    )
    return rx.cond(IssuesState.may_change, rx.hstack(
        rx.text(IssuesState.selected.length().to_string() + " picked", id="issues-picked"),
        rx.checkbox(rx.text("all ", IssuesState.total.to_string(), " matching"), checked=IssuesState.all_matching,
                    on_change=IssuesState.pick_all_matching, id="issues-all-matching", size="1"),
        bulk_button("Resolve", "resolve", "bulk-resolve", variant="solid"),
        bulk_button("Resolve in next release", "resolve_next_release", "bulk-resolve-next"),
        bulk_button("Unresolve", "unresolve", "bulk-unresolve"),
        ignore, assign,
        bulk_button("Merge", "merge", "bulk-merge"),
        rx.cond(IssuesState.confirming_delete,
                rx.hstack(bulk_button("Delete for good", "delete", "bulk-delete-confirm", variant="solid", color_scheme="red"),
                          rx.button("Keep", size="1", variant="soft", on_click=IssuesState.ask_bulk_delete(False))),
                rx.button("Delete", color_scheme="red", variant="outline", size="1", id="bulk-delete",
                          on_click=IssuesState.ask_bulk_delete(True), disabled=IssuesState.working)),
        rx.text(IssuesState.progress, id="issues-progress"),
        align="center", spacing="2", wrap="wrap", id="issues-bulk",
    ))


def issue_row(row: rx.Var[IssueRow]) -> rx.Component:
    return rx.table.row(
        rx.cond(IssuesState.may_change, rx.table.cell(rx.checkbox(
            checked=IssuesState.selected.contains(row.id), on_change=IssuesState.toggle(row.id), class_name="issue-pick"))),
        rx.table.cell(
            rx.link(row.title, href=row.href, class_name="issue-title"),
            rx.text(row.short_id, " · ", row.culprit, size="1", color_scheme="gray"),
        ),
        rx.table.cell(level_badge(row.level)),
        rx.table.cell(status_badge(row.status), class_name="issue-status"),
        rx.table.cell(row.assignee, class_name="issue-assignee"),
        rx.table.cell(row.count, class_name="issue-count"),
        rx.table.cell(rx.text(row.spark, font_family="monospace", white_space="pre", title="events per hour, last 24 h",
                              class_name="issue-spark")),
        rx.table.cell(row.last_seen, white_space="nowrap"),
        class_name="issue-row",
    )


@page_at(routes.ISSUES, TITLE, on_load=IssuesState.load, state=IssuesState, heading="Issues")
def page() -> rx.Component:
    return rx.vstack(
        search_bar(),
        rx.cond(IssuesState.problem != "", rx.callout(IssuesState.problem, color_scheme="orange", id="issues-problem")),
        saved_searches(),
        outcome(IssuesState, "issues-error", "issues-notice"),
        bulk_bar(),
        rx.table.root(
            rx.table.header(rx.table.row(
                rx.cond(IssuesState.may_change, rx.table.column_header_cell(rx.checkbox(
                    on_change=IssuesState.toggle_page, id="issues-pick-page", aria_label="Pick every issue shown"))),
                *[rx.table.column_header_cell(h, white_space="nowrap") for h in HEADERS])),
            rx.table.body(rx.foreach(IssuesState.rows, issue_row)),
            width="100%", id="issues-table",
        ),
        rx.cond(IssuesState.searched & (IssuesState.total == 0) & (IssuesState.problem == ""), rx.box(
            rx.text(rx.cond(IssuesState.query != "", rx.fragment("No issues match ", rx.code(IssuesState.query), "."),
                            "No issues yet."), size="3"),
            rx.text("Clear or change the search to see others; an error another app reports with the DSN on the "
                    "Overview page, or one from Try it, shows up here.", size="2", color_scheme="gray"),
            id="issues-empty", padding="1em 0",
        )),
        rx.hstack(
            rx.button("Newer", on_click=IssuesState.turn(-1), disabled=IssuesState.page_number == 0,
                      variant="outline", id="issues-previous"),
            rx.text("Page ", (IssuesState.page_number + 1).to_string(), " of ", IssuesState.pages.to_string()),
            rx.button("Older", on_click=IssuesState.turn(1),
                      disabled=IssuesState.page_number + 1 >= IssuesState.pages, variant="outline",
                      id="issues-next"),
            align="center", spacing="3",
        ),
        width="100%",
    )
