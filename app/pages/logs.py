"""`/logs`: the stream of log lines from the browser and the backend, newest first, with a level
filter, project, environment and release filters (app/components/trace_filters.py: every line unless one
is chosen) and a search in the body; it re-reads itself every 2 s while open. A line of a trace
links to that trace and, when the trace has an error stored, to the error's issue."""

from __future__ import annotations

import time
from typing import Any

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.log_rows import log_row
from app.components.page import page_at
from app.components.trace_filters import Filters, TraceFilters, facets, filter_selects
from app.console.state import ago, bounded, one_of, trace_reader
from app.presentation.log_lines import log_fields

TITLE = "Logs · Lookout"
SHOWN = 200
LEVELS = ["all", "trace", "debug", "info", "warn", "error", "fatal"]


def read_logs(level: str, search: str, filters: Filters) -> tuple[list[dict[str, Any]], dict[str, int], dict[str, list[str]]]:
    """The newest lines (blocking), the issue of an error of each of their traces, and what the
    filters offer."""
    reader = trace_reader()
    found = reader.logs(SHOWN, level, search, **filters)
    return found, reader.issues_of_traces([line["trace_id"] for line in found]), facets("logs")


class LogsState(TraceFilters, rx.State):
    live_route = routes.LOGS
    rows: list[dict[str, str]] = []
    level: str = "all"
    searched: bool = False  # read once (until then no empty state is shown)
    search: str = ""

    async def _read(self) -> None:
        level = "" if self.level == "all" else self.level
        found, issues, offered = await anyio.to_thread.run_sync(read_logs, level, self.search, self._filters())
        self._offer(offered)
        now = time.time()
        self.rows = [log_fields(line, ago(line["timestamp"], now), issues.get(str(line["trace_id"]).lower())) for line in found]
        self.searched = True

    @rx.event
    async def set_level(self, level: str) -> None:
        self.level = one_of(level, LEVELS, "all")
        await self._show()

    @rx.event
    async def set_search(self, search: str) -> None:
        self.search = bounded(search)
        await self._show()


@page_at(routes.LOGS, TITLE, on_load=LogsState.load, state=LogsState, heading="Logs")
def page() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.input(placeholder="Search log lines", value=LogsState.search,
                     on_change=LogsState.set_search.debounce(300), width="20em", id="logs-search"),
            rx.select(LEVELS, value=LogsState.level, on_change=LogsState.set_level, id="logs-level"),
            filter_selects(LogsState, "logs"),
            align="center", spacing="3", wrap="wrap",
        ),
        rx.table.root(rx.table.body(rx.foreach(LogsState.rows, log_row)), width="100%", id="logs-table"),
        rx.cond(LogsState.searched & (LogsState.rows.length() == 0), rx.text(
            "No log lines match. Clear the search, the level or the filters; the app's own log records at "
            "its log level and the browser's logs show up here.", size="2", color_scheme="gray", id="logs-empty")),
        width="100%",
    )
