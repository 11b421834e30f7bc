"""`/issue?id=N`: one issue, as Sentry's issue page reads: its counts, status, releases and assignee;
actions; events over time (a bar chart, 24 hours or 30 days); its tags' values with distribution bars;
one stored event (exception chain with frames, breadcrumbs, tags, contexts as key-value tables) with
navigation from the latest to the oldest; its merged fingerprints, and the activity timeline with
comments (app/pages/issue_triage.py). Every string from outside is rendered as text.

The stack view reads like Sentry's (rows from app/presentation/stack.py): in-app frames open with
their context lines, library frames folded (`toggle_fold` opens one), and a switch between the
original frames and the minified ones the browser sent (`show_frames`), offered when the event kept them."""

from __future__ import annotations

import reflex as rx
from reflex.event import EventSpec

from app import routes
from app.components.badges import level_badge, status_badge
from app.components.charts import counts_bar_chart, period_switch
from app.components.key_values import context_tables, distribution
from app.components.page import page_at
from app.inbox import states
from app.pages.issue_rows import PERIODS
from app.pages.issue_state import IssueState
from app.pages.issue_triage import activity, assignment, merged_hashes
from app.presentation import stack as present_stack
from app.presentation.words import count_of

TITLE = "Issue · Lookout"
# (button id, label, status it moves to, in the next release?, statuses it is offered in)
ACTIONS: list[tuple[str, str, str, bool, tuple[str, ...]]] = [
    ("issue-resolve", "Resolve", states.RESOLVED, False, states.OPEN),
    ("issue-resolve-next", "Resolve in next release", states.RESOLVED, True, states.OPEN),
    ("issue-ignore", "Ignore", states.IGNORED, False, states.OPEN),
    ("issue-reopen", "Reopen", states.UNRESOLVED, False, (states.RESOLVED,)),
    ("issue-unignore", "Stop ignoring", states.UNRESOLVED, False, (states.IGNORED,)),
]


def _action(element_id: str, label: str, to_status: str, next_release: bool, offered: tuple[str, ...]) -> rx.Component:
    return rx.cond(
        rx.Var.create(list(offered)).contains(IssueState.status),
        rx.button(label, on_click=IssueState.act(to_status, next_release), id=element_id, variant="soft"),
    )


def stack_row(row: rx.Var[present_stack.StackRow]) -> rx.Component:
    """One row of present_stack.stack_rows: every string is a text child, never HTML."""
    return rx.match(
        row.kind,
        ("exception", rx.heading(row.text, size="3", margin_top="0.75em", class_name="stack-exception")),
        ("fold", rx.button(
            rx.cond(row.opened, "▾ ", "▸ "), row.text,
            on_click=IssueState.toggle_fold(row.fold), variant="ghost", size="1", margin_left="1em",
            custom_attrs={"aria-expanded": rx.cond(row.opened, "true", "false")},
            class_name=rx.cond(row.opened, "stack-library-fold open", "stack-library-fold"),
        )),
        ("context", rx.el.div(
            rx.el.span(row.number, class_name="stack-context-number", display="inline-block", min_width="4em",
                       text_align="right", color="var(--gray-10)"),
            rx.el.span(rx.cond(row.marked, " → ", "   "), class_name="stack-context-marker"),
            rx.el.span(row.text),
            class_name=rx.cond(row.marked, "stack-context-line stack-context-current", "stack-context-line"),
            font_family="var(--code-font-family)", font_size="12px", white_space="pre", overflow_x="auto",
            padding_left="1em",
            background=rx.cond(row.marked, "var(--amber-a4)", "var(--gray-a2)"),
        )),
        ("var", rx.el.div(
            rx.el.span(row.name, class_name="stack-var-name", display="inline-block", min_width="10em",
                       color="var(--gray-11)", padding_right="1em"),
            rx.el.span(row.text, class_name="stack-var-value"),
            class_name="stack-var", font_family="var(--code-font-family)", font_size="12px", white_space="pre-wrap",
            word_break="break-all", padding_left=rx.cond(row.fold >= 0, "3em", "2em"),
            border_left="2px solid var(--gray-a5)", margin_left="1em",
        )),
        ("more", rx.text(row.text, size="2", color_scheme="gray", class_name="stack-more")),
        rx.box(
            rx.text(rx.cond(row.frame >= 0, rx.cond(row.opened, "▾ ", "▸ "), ""), row.text, size="2",
                    weight=rx.cond(row.in_app, "bold", "regular"),
                    on_click=IssueState.toggle_frame(row.frame),  # a frame with nothing to open sends -1: ignored
                    cursor=rx.cond(row.frame >= 0, "pointer", "default"),
                    custom_attrs={"aria-expanded": rx.cond(row.opened, "true", "false")},
                    class_name=rx.cond(row.in_app, "stack-frame in-app",
                                       rx.cond(row.fold >= 0, "stack-frame library", "stack-frame"))),
            rx.cond(row.page != "", rx.text(row.page, size="1", color_scheme="blue", class_name="stack-python-page")),
            rx.cond(row.error != "", rx.text(row.error, size="1", color_scheme="orange",
                                             class_name="stack-sourcemap-error")),
            padding_left=rx.cond(row.fold >= 0, "2em", "1em"), margin_top="0.25em",
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


def header() -> rx.Component:
    """Title, counts, releases, assignee, the status actions and what the last change did."""
    return rx.vstack(
        rx.heading(IssueState.title, size="6", id="page-title"),
        rx.text(IssueState.culprit, color_scheme="gray", id="issue-culprit"),
        rx.hstack(
            level_badge(IssueState.level), status_badge(IssueState.status, id="issue-status"),
            rx.text(count_of(IssueState.count, "event"), size="2", id="issue-count"),
            rx.cond(IssueState.users != "", rx.text(IssueState.users, size="2", id="issue-users")),
            rx.text("first seen ", IssueState.first_seen, " · last seen ", IssueState.last_seen, size="2",
                    white_space="nowrap"),
            align="center", spacing="3", wrap="wrap",
        ),
        rx.cond(IssueState.first_release != "", rx.text(
            "First seen in ", rx.code(IssueState.first_release, id="issue-first-release"),
            " · last seen in ", rx.code(IssueState.last_release, id="issue-last-release"), size="2",
        )),
        assignment(),
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
        rx.cond(IssueState.message != "", rx.callout(IssueState.message, color_scheme="orange", id="issue-message")),
        rx.cond(IssueState.notice != "", rx.callout(IssueState.notice, color_scheme="green", id="issue-notice")),
        width="100%", spacing="2",
    )


def overview() -> rx.Component:
    """What users said, events over time and the tags' distributions."""
    return rx.vstack(
        rx.cond(IssueState.feedback.length() > 0, rx.vstack(
            rx.heading("What users said", size="4"),
            rx.foreach(IssueState.feedback, lambda f: rx.box(
                rx.text(f["message"], class_name="issue-feedback"),
                rx.text(f["who"], " · ", f["when"], size="1", color_scheme="gray"),
                rx.cond(f["url"] != "", rx.text(f["url"], size="1", color_scheme="gray", class_name="issue-feedback-url")),
                rx.cond(f["release"] != "", rx.text("release ", f["release"], size="1", color_scheme="gray",
                                                    class_name="issue-feedback-release")),
            )),
        )),
        rx.hstack(
            rx.heading("Events over time", size="4"),
            rx.text(IssueState.chart_total, " stored (UTC)", size="1", color_scheme="gray", id="issue-chart-total"),
            rx.spacer(),
            period_switch(PERIODS, IssueState.period, IssueState.show_period, "issue-period"),
            align="center", width="100%",
        ),
        counts_bar_chart(IssueState.chart, "label", "events", "issue-chart"),
        rx.heading("Tags", size="4"),
        distribution(IssueState.distribution, "issue-breakdown"),
        width="100%", spacing="3",
    )


def _go(label: str, element_id: str, on_click: EventSpec, disabled: rx.Var[bool]) -> rx.Component:
    return rx.button(label, on_click=on_click, disabled=disabled, variant="outline", size="1", id=element_id)


def event_navigation() -> rx.Component:
    """Latest, newer, "N of M stored" (1: the latest), older, oldest."""
    at_latest, at_oldest = IssueState.position == 0, IssueState.position + 1 >= IssueState.stored
    return rx.hstack(
        rx.heading(rx.cond(at_latest, "Latest event", rx.cond(at_oldest, "Oldest event", "An earlier event")), size="4"),
        _go("Latest", "issue-latest", IssueState.jump("latest"), at_latest),
        _go("Newer", "issue-newer", IssueState.turn(-1), at_latest),
        rx.text((IssueState.position + 1).to_string(), " of ", IssueState.stored.to_string(), " stored",
                size="2", id="issue-position"),
        _go("Older", "issue-older", IssueState.turn(1), at_oldest),
        _go("Oldest", "issue-oldest", IssueState.jump("oldest"), at_oldest),
        align="center", spacing="3", wrap="wrap",
    )


def shown_event() -> rx.Component:
    """The event shown: its id, stack, breadcrumbs, tags and contexts."""
    return rx.vstack(
        event_navigation(),
        rx.hstack(
            rx.text("Event ", rx.code(IssueState.event_id, id="issue-event-id"), " (",
                    # An API route, not a page: a document load (React Router's Link would show the 404 page).
                    rx.link("JSON", href="/api/inbox/events/" + IssueState.event_id, reload_document=True,
                            id="issue-event-json"),
                    ")", size="2"),
            rx.cond(IssueState.trace_href != "", rx.link("View its trace →", href=IssueState.trace_href, size="2",
                                                         id="issue-trace-link")),
            align="center", spacing="4", wrap="wrap",
        ),
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
        context_tables(IssueState.contexts, "issue-contexts"),
        width="100%", spacing="3",
    )


@page_at(routes.ISSUE, TITLE, on_load=IssueState.load, state=IssueState, back=(routes.ISSUES, "← Issues"))
def page() -> rx.Component:
    return rx.cond(
        IssueState.found,
        rx.vstack(header(), overview(), shown_event(), merged_hashes(), activity(), width="100%", spacing="5"),
        rx.cond(IssueState.loaded, rx.text("There is no such issue.", id="issue-missing"),
                rx.text("Loading the issue…", id="issue-loading")),
    )
