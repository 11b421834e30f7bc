"""`/`: what Lookout is, and the state of error reporting in this process."""

import os
import time

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.layout import layout
from app.components.page import page_at
from app.console.state import ConsoleState, database, inbox_reader, tunnel_snapshot
from app.projects.registry import Projects
from app.releases import health
from app.settings import SETTINGS
from app.sourcemaps import own_build
from reflex_lookout.sourcemaps import to_sentry

TITLE = "Lookout"
# When this backend process started, near enough: the tunnel's counters (reflex_lookout/stats.py)
# live in its memory from its start, like this module.
PROCESS_STARTED = time.time()


class HomeState(ConsoleState, rx.State):
    """Reporting status as the running backend sees it (not as it was at build time). Anyone may
    see what Lookout is, where this app reports and its own DSN (its pages carry it anyway); the
    other projects' DSNs, the inbox's counts, the tunnel's figures and (Sentry mode) where the
    build's source maps went need the console's access."""

    destination: str = ""
    tunnel_path: str = ""
    environment: str = ""
    release: str = ""
    # Local mode: the DSN another app's Sentry SDK can report to this inbox with.
    inbox_dsn: str = ""
    # Local mode: the projects added besides it, as (name, DSN).
    other_projects: list[tuple[str, str]] = []
    # Local mode: what the inbox counted rather than kept.
    inbox_counts: list[tuple[str, str]] = []
    # (label, figure, element id) rows as /monitoring/stats reports them: what is stored now (the
    # outbox, every process's and this server's own SDK's), and what this process counted since it
    # started (`tunnel_figures`).
    stored_figures: list[tuple[str, str, str]] = []
    figures: list[tuple[str, str, str]] = []
    # Which process counted `figures`, and since when.
    counted_by: str = ""
    # Sentry mode: where the newest build's source maps are (reflex_lookout/sourcemaps/to_sentry.py).
    sentry_maps: str = ""

    @rx.event
    async def load(self) -> None:
        allowed = await self._show()  # clears the state for a client that may not see the console
        self.destination = SETTINGS.destination
        self.tunnel_path = SETTINGS.tunnel_path
        self.environment = SETTINGS.environment
        self.release = SETTINGS.release or "(not set)"
        self.inbox_dsn = inbox_dsn(self.router.headers.host) if SETTINGS.dsn is None else ""
        if not allowed:
            self.refused = ""  # the page is for everyone; only the console's part is left out

    async def _read(self) -> None:
        if SETTINGS.dsn is None:
            host = self.router.headers.host or SETTINGS.local_dsn.netloc
            found = await anyio.to_thread.run_sync(Projects(database()).all)
            self.other_projects = [(p.name, p.dsn(host)) for p in found if str(p.id) != SETTINGS.local_dsn.project_id]
            inbox = inbox_reader()
            self.inbox_counts = counted(*await anyio.to_thread.run_sync(
                lambda: (health.by_status(inbox.engine), inbox.counts("discarded"))
            ))
        else:
            self.sentry_maps = await anyio.to_thread.run_sync(lambda: to_sentry.report(own_build.upload_settings(SETTINGS)))
        self.stored_figures, self.figures = tunnel_figures(await anyio.to_thread.run_sync(tunnel_snapshot))
        self.counted_by = counted_by()


def inbox_dsn(host: str) -> str:
    """The local project's DSN with the host this backend was reached at (its ingest endpoints
    are on the same port)."""
    local = SETTINGS.local_dsn
    return f"http://{local.public_key}@{host or local.netloc}{local.path_prefix}/{local.project_id}"


def counted(sessions: dict[str, int], discarded: dict[str, int]) -> list[tuple[str, str]]:
    """Sessions by how they ended (app/releases/health.py), and what SDKs discarded by reason, as
    (label, figure) rows; none for a status with no session."""
    by_reason: dict[str, int] = {}
    for key, count in discarded.items():
        reason = key.rsplit("|", 1)[-1]
        by_reason[reason] = by_reason.get(reason, 0) + count
    return ([(f"Sessions {status}", str(n)) for status, n in sessions.items() if n]
            + [(f"Discarded by SDKs ({reason})", str(n)) for reason, n in sorted(by_reason.items())])


def tunnel_figures(snapshot: dict) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """(what is stored now, what this process counted since it started) as (label, figure, element id) rows.

    The two are different sources and are labelled so, not read as one: the counters are in this
    process's memory (a restart, or another worker, starts from zero), and the server's own SDK puts
    its envelopes in the outbox without passing the tunnel, so "kept" can be above "accepted". No
    stored count of accepted envelopes exists to show instead."""
    outbox = snapshot["outbox"]
    stored = [
        ("Kept for the inbox (stored)", outbox["local"]["envelopes"], "local"),
        ("Waiting in the outbox for Sentry (stored)", outbox["pending"]["envelopes"], "pending"),
    ]
    counted = [
        ("Accepted by this process since it started", snapshot["accepted"], "accepted"),
        ("Forwarded to Sentry by this process", snapshot["forwarded"], "forwarded"),
        ("Delivery attempts to retry", snapshot["retrying"], "retrying"),
        ("Answered 429 (rate-limited)", snapshot["rate_limited"], "rate-limited"),
        ("Rejected", snapshot["rejected_total"], "rejected"),
        ("Refused by Sentry (dropped)", snapshot["dropped_total"], "dropped"),
    ]
    return ([(label, str(value), f"figure-{key}") for label, value, key in stored],
            [(label, str(value), f"figure-{key}") for label, value, key in counted])


def counted_by(pid: int | None = None, started: float | None = None) -> str:
    """The process whose counters the page shows: "process 123, started 2026-01-02 03:04 UTC"."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(PROCESS_STARTED if started is None else started))
    return f"process {os.getpid() if pid is None else pid}, started {when}"


def _figures(rows: rx.Var[list[tuple[str, str, str]]], element_id: str) -> rx.Component:
    return rx.data_list.root(
        rx.foreach(rows, lambda row: rx.data_list.item(
            rx.data_list.label(row[0]), rx.data_list.value(row[1], id=row[2]),
        )),
        margin_top="0.5em", id=element_id,
    )


def _row(label: str, value: rx.Var[str], test_id: str) -> rx.Component:
    return rx.data_list.item(
        rx.data_list.label(label),
        rx.data_list.value(rx.code(value), id=test_id),
    )


def status_panel() -> rx.Component:
    return rx.card(
        rx.heading("Error reporting", size="4"),
        rx.data_list.root(
            _row("Reports go to", HomeState.destination, "status-destination"),
            _row("Tunnel path", HomeState.tunnel_path, "status-tunnel"),
            _row("Environment", HomeState.environment, "status-environment"),
            _row("Release", HomeState.release, "status-release"),
            margin_top="0.75em",
        ),
        rx.cond(HomeState.sentry_maps != "", rx.text(HomeState.sentry_maps, size="2", margin_top="0.75em",
                                                     id="status-sourcemaps")),
        rx.cond(
            HomeState.inbox_dsn != "",
            rx.box(
                rx.heading("Report from another app", size="3", margin_top="1em"),
                rx.text("Give any Sentry SDK this DSN; its errors land in this inbox:", size="2"),
                rx.code(HomeState.inbox_dsn, id="inbox-dsn"),
                rx.cond(HomeState.other_projects.length() > 0, rx.data_list.root(
                    rx.foreach(HomeState.other_projects, lambda p: rx.data_list.item(
                        rx.data_list.label(p[0]), rx.data_list.value(rx.code(p[1], class_name="project-dsn")),
                    )), margin_top="0.5em", id="inbox-projects",
                )),
                rx.text("More projects: ", rx.code("python -m app.projects.registry add NAME"), ".",
                        size="1", color_scheme="gray"),
                rx.cond(HomeState.inbox_counts.length() > 0, rx.text(
                    "Counted by the inbox (stored):", size="2", color_scheme="gray", margin_top="0.75em")),
                rx.data_list.root(rx.foreach(HomeState.inbox_counts, lambda row: rx.data_list.item(
                    rx.data_list.label(row[0]), rx.data_list.value(row[1]),
                )), margin_top="0.25em", id="inbox-counts"),
            ),
        ),
        rx.heading("Tunnel", size="3", margin_top="1em"),
        rx.text("Stored now: every backend process's envelopes, this server's own errors and traces among them.",
                size="2", color_scheme="gray"),
        _figures(HomeState.stored_figures, "figures-stored"),
        rx.text(
            "Counted in memory by the process that answered this page (", HomeState.counted_by, "): the "
            "envelopes that came in through the tunnel or the ingest endpoints. A restart or another worker "
            "counts from zero, and this server's own SDK writes to the outbox directly, so these can be below "
            "the stored figures.",
            size="2", color_scheme="gray", margin_top="0.75em", id="figures-counted-by",
        ),
        _figures(HomeState.figures, "figures-process"),
        rx.text(
            # The stats are an API route, not a page the client router knows: a full page load.
            "As JSON: ",
            rx.link(HomeState.tunnel_path + "/stats", href=HomeState.tunnel_path + "/stats", reload_document=True,
                    id="stats-link"),
            size="2", color_scheme="gray", margin_top="0.75em",
        ),
        id="status-panel",
        width="100%",
    )


@page_at(routes.HOME, TITLE, on_load=HomeState.load)
def page() -> rx.Component:
    return layout(
        rx.heading("Lookout", size="8", id="page-title"),
        rx.text(
            "Lookout is a web app whose errors never go missing. Its browser and server report "
            "errors, traces and logs through a tunnel on the app's own origin; with no Sentry DSN "
            "set, they land in an embedded inbox whose console is this app.",
        ),
        status_panel(),
    )
