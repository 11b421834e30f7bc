"""`/releases`: release health (docs/releases.md), one row per project and release, last seen first:
its sessions, crash-free sessions and users, how many sessions ended errored, abnormal or crashed,
its users, its adoption (its share of the project's sessions in the last 24 hours), when it was first
and last seen, how many issues were first seen in it, and a link to its issues (under its version).
A release's version opens its chart above the table: its sessions over time, stacked by how they
ended. The state and what it reads are app/pages/releases_state.py; every version, project name and
figure is text, never HTML."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.components.charts import period_switch, stacked_bar_chart
from app.components.forms import native_select
from app.components.page import page_at
from app.pages.releases_state import PERIODS, ReleasesState

TITLE = "Releases · Lookout"
EMPTY = ("No releases yet. A release appears here when an SDK sends sessions that name it — sentry-sdk does when "
         "release= is set in sentry_sdk.init, the browser SDK when release is set in Sentry.init — or when events "
         "name a release.")
STACKS = [("healthy", "var(--grass-9)"), ("errored", "var(--amber-9)"), ("abnormal", "var(--gray-9)"),
          ("crashed", "var(--red-9)")]  # the chart's segments, bottom first
COLUMNS = ("Project", "Release", "Sessions", "Crash-free sessions", "Crash-free users", "Errored / abnormal / crashed",
           "Users", "Adoption (24 h)", "First seen", "Last seen", "New issues")


def _class(key: str) -> str:
    return f"release-{key.replace('_', '-')}"


def _figure(row: rx.Var[dict[str, str]], key: str) -> rx.Component:
    return rx.table.cell(row[key], class_name=_class(key), white_space="nowrap")


def _endings(row: rx.Var[dict[str, str]]) -> rx.Component:
    """How many sessions ended errored, abnormal and crashed, in one cell."""
    parts: list[rx.Component | str] = []
    for key in ("errored", "abnormal", "crashed"):
        parts += [" / "] if parts else []
        parts.append(rx.text.span(row[key], class_name=_class(key), title=key))
    return rx.table.cell(*parts, white_space="nowrap")


def _seen(row: rx.Var[dict[str, str]], key: str) -> rx.Component:
    return rx.table.cell(rx.text(row[key], title=row[f"{key}_at"]), class_name=_class(key), white_space="nowrap")


def release_row(row: rx.Var[dict[str, str]]) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row["project"], class_name="release-project"),
        rx.table.cell(
            rx.link(row["version"], href=row["chart"], class_name="release-chart-link"),
            rx.text(rx.link("Issues", href=row["issues"], class_name="release-issues"), size="1"),
            class_name="release-version", min_width="9em", overflow_wrap="anywhere",
        ),
        *[_figure(row, key) for key in ("sessions", "crash_free_sessions", "crash_free_users")],
        _endings(row),
        *[_figure(row, key) for key in ("users", "adoption")],
        _seen(row, "first_seen"),
        _seen(row, "last_seen"),
        _figure(row, "new_issues"),
        class_name="release-row",
    )


def release_chart() -> rx.Component:
    """The chart of the release the URL names, or why there is none."""
    return rx.cond(ReleasesState.release != "", rx.cond(
        ReleasesState.charted,
        rx.vstack(
            rx.hstack(
                rx.heading(ReleasesState.release, size="4", id="release-chart-version", overflow_wrap="anywhere"),
                rx.text(ReleasesState.chart_project, " · ", ReleasesState.chart_total, " (UTC)", size="1",
                        color_scheme="gray", id="release-chart-total"),
                rx.spacer(),
                period_switch(PERIODS, ReleasesState.period, ReleasesState.show_period, "release-period"),
                rx.link("Close", href=ReleasesState.close_href, id="release-chart-close"),
                align="center", width="100%",
            ),
            stacked_bar_chart(ReleasesState.chart, "label", STACKS, "release-chart"),
            width="100%", spacing="2",
        ),
        rx.text("No sessions or events name release ", ReleasesState.release, ".", size="2", color_scheme="gray",
                id="release-chart-missing"),
    ))


@page_at(routes.RELEASES, TITLE, on_load=ReleasesState.load, state=ReleasesState, heading="Releases")
def page() -> rx.Component:
    return rx.vstack(
        rx.cond(ReleasesState.project_list.length() > 2, native_select(
            ReleasesState.project_list, ReleasesState.project_choice, ReleasesState.set_project, "releases-project")),
        release_chart(),
        rx.cond(ReleasesState.rows.length() > 0, rx.table.root(
            rx.table.header(rx.table.row(*(rx.table.column_header_cell(label) for label in COLUMNS))),
            rx.table.body(rx.foreach(ReleasesState.rows, release_row)),
            width="100%", size="1", id="releases",
        )),
        rx.cond(ReleasesState.searched & (ReleasesState.rows.length() == 0),
                rx.text(EMPTY, size="2", color_scheme="gray", id="releases-empty")),
        width="100%",
    )
