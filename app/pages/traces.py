"""`/traces`: traces as they arrive, as Sentry's trace explorer lists them: one row per trace, named
after its root (a browser page load or navigation, or the backend event that started it), the trace's
other transactions nested under it (a page's on_load as `TracesState.load`) and Reflex's own plumbing
events folded (app/presentation/traces.py); of every project, environment and release unless the
selects (app/components/trace_filters.py) or the search (the triage search's syntax where it applies:
app/inbox/trace_search.py; a trace with a matching transaction is listed) narrow them, and
`/trace?id=<trace id>`: one trace's transactions and spans as a waterfall (a span that failed
marked), with the errors and the log lines of the same trace beside it, each error linking to its
issue."""

from __future__ import annotations

import time
from typing import Any

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.log_rows import log_row
from app.components.page import page_at
from app.components.trace_filters import TraceFilters, facets, filter_selects
from app.console.state import ConsoleState, ago, bounded, trace_reader
from app.inbox.search import SearchError
from app.inbox.search.grammar import MAX_QUERY_CHARS
from app.presentation import event as present
from app.presentation.log_lines import log_fields
from app.presentation.traces import TraceChild, TraceRow, trace_row
from app.presentation.words import count_of

TITLE = "Traces · Lookout"
TRACE_TITLE = "Trace · Lookout"
PAGE_SIZE = 50


class TracesState(TraceFilters, rx.State):
    live_route = routes.TRACES
    rows: list[TraceRow] = []
    total: int = 0  # traces that match
    search: str = ""
    problem: str = ""  # why the search does not parse
    searched: bool = False  # read once (until then no empty state is shown)

    async def _read(self) -> None:
        search, filters = self.search, self._filters()

        def read() -> tuple[list[dict[str, Any]], int, str, dict[str, list[str]]]:
            offered = facets("transactions")
            try:
                return (*trace_reader().traces(PAGE_SIZE, 0, search, **filters), "", offered)
            except SearchError as exc:
                return [], 0, str(exc), offered

        found, self.total, self.problem, offered = await anyio.to_thread.run_sync(read)
        self.searched = True
        self._offer(offered)
        now = time.time()
        self.rows = [trace_row(t, ago(max((m["received_at"] for m in t["transactions"]), default=now), now),
                               f"{routes.TRACE}?id={t['trace_id']}") for t in found]

    @rx.event
    async def set_search(self, search: str) -> None:
        self.search = bounded(search, MAX_QUERY_CHARS)
        await self._show()


def read_trace(trace_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """The trace's transactions, errors and log lines (blocking)."""
    reader = trace_reader()
    return reader.trace(trace_id), reader.trace_errors(trace_id), reader.trace_logs(trace_id)


class TraceState(ConsoleState, rx.State):
    trace_id: str = ""
    rows: list[dict[str, str]] = []
    errors: list[dict[str, str]] = []
    logs: list[dict[str, str]] = []

    async def _read(self) -> None:
        self.trace_id = self.router.url.query_parameters.get("id", "")[:64]
        transactions, errors, logs = await anyio.to_thread.run_sync(read_trace, self.trace_id)
        now = time.time()
        self.rows = present.waterfall_rows(transactions)
        self.errors = [{
            "title": e["title"] or "(untitled)", "level": e["level"], "when": ago(e["timestamp"], now),
            "href": f"{routes.ISSUE}?id={e['issue_id']}", "event_id": e["event_id"],
        } for e in errors]
        self.logs = [log_fields(line, ago(line["timestamp"], now)) for line in logs]


def trace_child(child: rx.Var[TraceChild], class_name: str) -> rx.Component:
    """A transaction of the trace under its row: name, op and duration, nested as deep as it is."""
    return rx.hstack(
        rx.text("↳ ", child.name, size="1", weight="medium", class_name="trace-child-name", white_space="nowrap"),
        rx.text(child.op, size="1", color_scheme="gray", white_space="nowrap"),
        rx.text(child.duration, size="1", color_scheme="gray", white_space="nowrap"),
        rx.cond(child.failed, rx.badge(child.status, color_scheme="red", size="1")),
        spacing="2", align="center", padding_left=child.indent, class_name=class_name,
    )


def trace_list_row(row: rx.Var[TraceRow]) -> rx.Component:
    """One trace: its root, its own transactions nested under it, Reflex's plumbing folded (a `details`
    element: opened and closed in the browser alone, kept by the trace's key across refreshes)."""
    return rx.table.row(
        rx.table.cell(
            rx.link(row.name, href=row.href, class_name="trace-name"),
            rx.text(row.platform, size="1", color_scheme="gray"),
            rx.foreach(row.children, lambda child: trace_child(child, "trace-child")),
            rx.cond(row.more != "", rx.link(row.more, href=row.href, size="1", class_name="trace-more")),
            rx.cond(row.internal.length() > 0, rx.el.details(
                rx.el.summary(rx.text("Reflex internals (", row.internal.length().to_string(), ")", size="1",
                                      color_scheme="gray", as_="span"), class_name="trace-internals-toggle"),
                rx.foreach(row.internal, lambda child: trace_child(child, "trace-internal")),
                class_name="trace-internals",
            )),
        ),
        rx.table.cell(row.op), rx.table.cell(row.duration), rx.table.cell(row.transactions, class_name="trace-count"),
        rx.table.cell(row.status), rx.table.cell(row.when, white_space="nowrap"),
        class_name="trace-row", key=row.key,
    )


@page_at(routes.TRACES, TITLE, on_load=TracesState.load, state=TracesState, heading="Traces")
def page() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.input(placeholder="environment:production release:1.2 GET /api", value=TracesState.search,
                     on_change=TracesState.set_search.debounce(300), width="24em", id="traces-search"),
            filter_selects(TracesState, "traces"),
            rx.text(count_of(TracesState.total, "trace"), id="traces-total"),
            align="center", spacing="3", wrap="wrap",
        ),
        rx.cond(TracesState.problem != "", rx.callout(TracesState.problem, color_scheme="orange", id="traces-problem")),
        rx.table.root(
            rx.table.header(rx.table.row(*[rx.table.column_header_cell(h) for h in (
                "Trace", "Operation", "Duration", "Transactions", "Status", "Received")])),
            rx.table.body(rx.foreach(TracesState.rows, trace_list_row)),
            width="100%", id="traces-table",
        ),
        rx.cond(TracesState.searched & (TracesState.total == 0) & (TracesState.problem == ""), rx.text(
            "No traces match. Clear the search or the filters; a page load in the browser, an event "
            "the backend handles or another app's transaction shows up here.",
            size="2", color_scheme="gray", id="traces-empty")),
        width="100%",
    )


def waterfall_row(row: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.hstack(
        rx.box(
            rx.text(row["label"], size="1", weight=rx.cond(row["kind"] == "transaction", "bold", "regular"),
                    trim="both", class_name="waterfall-label"),
            rx.text(row["op"], size="1", color_scheme="gray", class_name="waterfall-op"),
            padding_left=row["indent"], width="40%", overflow="hidden",
        ),
        rx.box(
            rx.box(height="0.8em", margin_left=row["left"], width=row["width"], border_radius="2px",
                   background=rx.cond(row["failed"] == "yes", "var(--red-9)",
                                      rx.cond(row["kind"] == "transaction", "var(--accent-9)", "var(--gray-8)"))),
            width="45%",
        ),
        rx.text(row["duration"], size="1", width="15%", text_align="right"),
        width="100%", align="center",
        class_name=rx.cond(row["failed"] == "yes", "waterfall-row waterfall-failed", "waterfall-row"),
    )


def trace_error(row: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(rx.link(row["title"], href=row["href"], class_name="trace-error-link")),
        rx.table.cell(rx.badge(row["level"], color_scheme="red")),
        rx.table.cell(row["when"], white_space="nowrap"),
        class_name="trace-error",
    )


@page_at(routes.TRACE, TRACE_TITLE, on_load=TraceState.load, state=TraceState, heading="Trace", heading_size="6",
         back=(routes.TRACES, "← Traces"))
def trace_page() -> rx.Component:
    return rx.vstack(
        rx.code(TraceState.trace_id, id="trace-id"),
        rx.cond(TraceState.rows.length() == 0, rx.text("No transactions of this trace are stored.")),
        rx.vstack(rx.foreach(TraceState.rows, waterfall_row), width="100%", spacing="1", id="waterfall"),
        rx.heading("Errors in this trace", size="4", margin_top="1em"),
        rx.cond(TraceState.errors.length() == 0, rx.text("No error of this trace is stored.", size="2")),
        rx.table.root(rx.table.body(rx.foreach(TraceState.errors, trace_error)), width="100%", id="trace-errors"),
        rx.heading("Log lines of this trace", size="4", margin_top="1em"),
        rx.cond(TraceState.logs.length() == 0, rx.text("No log line of this trace is stored.", size="2")),
        rx.table.root(rx.table.body(rx.foreach(TraceState.logs, log_row)), width="100%", id="trace-logs"),
        width="100%", spacing="2",
    )
