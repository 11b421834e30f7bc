"""`/logs`: the stream of log lines from the browser and the backend, newest first, with a level
filter and a search; it re-reads itself every 2 s while open."""

from __future__ import annotations

import json
import time

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.layout import layout
from app.components.refused import unless_refused
from app.console.state import ConsoleState, ago, bounded, one_of, trace_reader

TITLE = "Logs · Lookout"
SHOWN = 200
LEVELS = ["all", "trace", "debug", "info", "warn", "error", "fatal"]


def attributes_text(attributes: str) -> str:
    """`name=value` pairs of a log line's attributes (Sentry sends each as {"value", "type"})."""
    try:
        found = json.loads(attributes)
    except ValueError:
        return ""
    pairs = []
    for name, value in sorted(found.items()) if isinstance(found, dict) else []:
        shown = value.get("value") if isinstance(value, dict) else value
        pairs.append(f"{name}={shown}")
    return " ".join(pairs)


class LogsState(ConsoleState, rx.State):
    live_route = routes.LOGS
    rows: list[dict[str, str]] = []
    level: str = "all"
    search: str = ""

    async def _read(self) -> None:
        level = "" if self.level == "all" else self.level
        found = await anyio.to_thread.run_sync(lambda: trace_reader().logs(SHOWN, level, self.search))
        now = time.time()
        self.rows = [{
            "when": ago(line["timestamp"], now), "level": line["level"], "body": line["body"],
            "attributes": attributes_text(line["attributes"]),
            "trace": f"{routes.TRACE}?id={line['trace_id']}" if line["trace_id"] else "",
        } for line in found]

    @rx.event
    async def set_level(self, level: str) -> None:
        self.level = one_of(level, LEVELS, "all")
        await self._show()

    @rx.event
    async def set_search(self, search: str) -> None:
        self.search = bounded(search)
        await self._show()


def log_row(row: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row["when"], white_space="nowrap"),
        rx.table.cell(rx.badge(row["level"])),
        rx.table.cell(rx.text(row["body"], class_name="log-body"),
                      rx.text(row["attributes"], size="1", color_scheme="gray")),
        rx.table.cell(rx.cond(row["trace"] != "", rx.link("trace", href=row["trace"]))),
        class_name="log-row",
    )


def page() -> rx.Component:
    return layout(
        rx.heading("Logs", size="7", id="page-title"),
        unless_refused(
            LogsState,
            rx.vstack(
                rx.hstack(
                    rx.input(placeholder="Search log lines", value=LogsState.search,
                             on_change=LogsState.set_search.debounce(300), width="20em", id="logs-search"),
                    rx.select(LEVELS, value=LogsState.level, on_change=LogsState.set_level, id="logs-level"),
                    align="center", spacing="3",
                ),
                rx.table.root(rx.table.body(rx.foreach(LogsState.rows, log_row)), width="100%", id="logs-table"),
                width="100%",
            ),
        ),
    )
