"""`/monitors`: the cron monitors the SDKs' check-ins made (app/monitors/, docs/monitors.md), by project
and slug: each one's state, schedule, last check-in and when the next is expected, and its recent
check-ins (status, duration, when). It re-reads itself every 2 s while open. Every handler is a public
endpoint: `load` checks access (ConsoleState), and there is no other."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.page import page_at
from app.console.state import ConsoleState, ago, database
from app.monitors import reading
from app.monitors.states import schedule_of

TITLE = "Monitors · Lookout"
EMPTY = ("No monitors yet. A job that checks in with sentry-sdk's @sentry_sdk.crons.monitor(monitor_slug=...) or "
         "capture_checkin shows up here, with its schedule when it sends a monitor_config.")
COLORS = {"ok": "green", "new": "gray", "missed": "red", "error": "red", "timeout": "orange",
          "in_progress": "blue"}


def read_monitors() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The monitors and their recent check-ins (blocking)."""
    return reading.monitors(database())


def _when(timestamp: float | None, now: float) -> str:
    if timestamp is None:
        return "—"
    moment = datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"{moment} ({ago(timestamp, now)})" if timestamp <= now else f"{moment} (in {_span(timestamp - now)})"


def _span(seconds: float) -> str:
    if seconds < 90:
        return f"{max(0, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h" if seconds < 172800 else f"{round(seconds / 86400)} days"


def monitor_fields(found: dict[str, Any], now: float) -> dict[str, str]:
    """One monitor as the page shows it (every string from outside as text)."""
    return {
        "id": str(found["id"]), "slug": found["slug"], "project": found["project"], "state": found["state"],
        "color": COLORS.get(found["state"], "gray"), "schedule": schedule_of(SimpleNamespace(**found)).described(),
        "margin": f"margin {found['checkin_margin_min']} min · max runtime {found['max_runtime_min']} min",
        "last": _when(found["last_checkin_at"], now), "next": _when(found["next_expected_at"], now),
    }


def checkin_fields(found: dict[str, Any], now: float) -> dict[str, str]:
    duration = found["duration"]
    return {
        "monitor_id": str(found["monitor_id"]), "status": found["status"], "color": COLORS.get(found["status"], "gray"),
        "duration": "—" if duration is None else f"{duration:.3f} s" if duration < 60 else _span(duration),
        "when": _when(found["started_at"], now), "environment": found["environment"], "release": found["release"],
    }


class MonitorsState(ConsoleState, rx.State):
    live_route = routes.MONITORS
    monitors: list[dict[str, str]] = []
    checkins: list[dict[str, str]] = []
    searched: bool = False

    async def _read(self) -> None:
        found, recent = await anyio.to_thread.run_sync(read_monitors)
        now = time.time()
        self.monitors = [monitor_fields(m, now) for m in found]
        self.checkins = [checkin_fields(c, now) for c in recent]
        self.searched = True


def checkin_row(monitor: rx.Var[dict[str, str]], checkin: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.cond(checkin["monitor_id"] == monitor["id"], rx.table.row(
        rx.table.cell(rx.badge(checkin["status"], color_scheme=checkin["color"])),
        rx.table.cell(checkin["duration"]),
        rx.table.cell(checkin["when"]),
        rx.table.cell(checkin["environment"], " ", checkin["release"]),
        class_name="monitor-checkin",
    ))


def monitor_card(monitor: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.card(
        rx.hstack(
            rx.heading(monitor["slug"], size="4", class_name="monitor-slug"),
            rx.badge(monitor["state"], color_scheme=monitor["color"], class_name="monitor-state"),
            rx.text(monitor["project"], size="2", color_scheme="gray"),
            align="center", spacing="3",
        ),
        rx.text("Schedule: ", monitor["schedule"], " · ", monitor["margin"], size="2"),
        rx.text("Last check-in: ", monitor["last"], " · next expected: ", monitor["next"], size="2"),
        rx.table.root(rx.table.body(rx.foreach(MonitorsState.checkins, lambda c: checkin_row(monitor, c))),
                      size="1", width="100%"),
        width="100%", class_name="monitor",
    )


@page_at(routes.MONITORS, TITLE, on_load=MonitorsState.load, state=MonitorsState, heading="Monitors")
def page() -> rx.Component:
    return rx.vstack(
        rx.foreach(MonitorsState.monitors, monitor_card),
        rx.cond(MonitorsState.searched & (MonitorsState.monitors.length() == 0),
                rx.text(EMPTY, size="2", color_scheme="gray", id="monitors-empty")),
        width="100%", id="monitors",
    )
