"""`/`: what Lookout is, and the state of error reporting in this process."""

import reflex as rx

from app.components.layout import layout
from app.monitoring.settings import SETTINGS

TITLE = "Lookout"


class HomeState(rx.State):
    """Reporting status as the running backend sees it (not as it was at build time)."""

    destination: str = ""
    tunnel_path: str = ""
    environment: str = ""
    release: str = ""

    @rx.event
    def load(self) -> None:
        self.destination = SETTINGS.destination
        self.tunnel_path = SETTINGS.tunnel_path
        self.environment = SETTINGS.environment
        self.release = SETTINGS.release or "(not set)"


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
