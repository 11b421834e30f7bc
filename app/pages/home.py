"""`/`: what Lookout is, and the state of error reporting in this process."""

import anyio.to_thread
import reflex as rx

from app import db, wiring
from app.components.layout import layout
from app.console.state import ConsoleState, inbox_reader
from app.inbox.projects import Projects
from app.settings import SETTINGS
from app.sourcemaps import to_sentry

TITLE = "Lookout"


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
    # (label, figure, element id) rows of the tunnel's counters, as /monitoring/stats reports them.
    figures: list[tuple[str, str, str]] = []
    # Sentry mode: where the newest build's source maps are (app/sourcemaps/to_sentry.py).
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
            found = await anyio.to_thread.run_sync(Projects(db.engine()).all)
            self.other_projects = [(p.name, p.dsn(host)) for p in found if str(p.id) != SETTINGS.local_dsn.project_id]
            inbox = inbox_reader()
            self.inbox_counts = counted(*await anyio.to_thread.run_sync(
                lambda: (inbox.counts("session"), inbox.counts("discarded"))
            ))
        else:
            self.sentry_maps = await anyio.to_thread.run_sync(lambda: to_sentry.report(settings=SETTINGS))
        self.figures = tunnel_figures(await anyio.to_thread.run_sync(wiring.tunnel.snapshot))


def inbox_dsn(host: str) -> str:
    """The local project's DSN with the host this backend was reached at (its ingest endpoints
    are on the same port)."""
    local = SETTINGS.local_dsn
    return f"http://{local.public_key}@{host or local.netloc}{local.path_prefix}/{local.project_id}"


def counted(sessions: dict[str, int], discarded: dict[str, int]) -> list[tuple[str, str]]:
    """Session updates by status, and what SDKs discarded by reason, as (label, figure) rows."""
    by_status: dict[str, int] = {}
    for key, count in sessions.items():
        status = key.rsplit("|", 1)[-1]
        by_status[status] = by_status.get(status, 0) + count
    by_reason: dict[str, int] = {}
    for key, count in discarded.items():
        reason = key.rsplit("|", 1)[-1]
        by_reason[reason] = by_reason.get(reason, 0) + count
    return ([(f"Sessions {status}", str(n)) for status, n in sorted(by_status.items())]
            + [(f"Discarded by SDKs ({reason})", str(n)) for reason, n in sorted(by_reason.items())])


def tunnel_figures(snapshot: dict) -> list[tuple[str, str, str]]:
    outbox = snapshot["outbox"]
    rows = [
        ("Accepted", snapshot["accepted"], "accepted"),
        ("Forwarded to Sentry", snapshot["forwarded"], "forwarded"),
        ("Kept for the local inbox", outbox["local"]["envelopes"], "local"),
        ("Waiting in the outbox", outbox["pending"]["envelopes"], "pending"),
        ("Delivery attempts to retry", snapshot["retrying"], "retrying"),
        ("Answered 429 (rate-limited)", snapshot["rate_limited"], "rate-limited"),
        ("Rejected", snapshot["rejected_total"], "rejected"),
        ("Refused by Sentry (dropped)", snapshot["dropped_total"], "dropped"),
    ]
    return [(label, str(value), f"figure-{key}") for label, value, key in rows]


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
                rx.text("More projects: `python -m app.inbox.projects add NAME`.", size="1", color_scheme="gray"),
                rx.data_list.root(rx.foreach(HomeState.inbox_counts, lambda row: rx.data_list.item(
                    rx.data_list.label(row[0]), rx.data_list.value(row[1]),
                )), margin_top="0.75em", id="inbox-counts"),
            ),
        ),
        rx.heading("Tunnel", size="3", margin_top="1em"),
        rx.text(
            "Counts since the backend started; the outbox figures are what is stored now.",
            size="2", color_scheme="gray",
        ),
        rx.data_list.root(
            rx.foreach(
                HomeState.figures,
                lambda row: rx.data_list.item(
                    rx.data_list.label(row[0]), rx.data_list.value(row[1], id=row[2])
                ),
            ),
            margin_top="0.5em",
        ),
        rx.text(
            # A plain anchor: the stats are an API route, not a page the client router knows.
            "As JSON: ", rx.el.a(HomeState.tunnel_path + "/stats", href=HomeState.tunnel_path + "/stats"),
            size="2", color_scheme="gray", margin_top="0.75em",
        ),
        id="status-panel",
        width="100%",
    )


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
