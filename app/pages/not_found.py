"""The custom 404 page, shown for every path no page claims."""

import reflex as rx

from app import routes
from app.components.layout import layout
from app.components.page import page_at

TITLE = "Not found · Lookout"


@page_at(routes.NOT_FOUND, TITLE)
def page() -> rx.Component:
    return layout(
        rx.heading("Page not found", size="7", id="not-found-title"),
        rx.text("Nothing lives at this address. It may have moved, or the link may be mistyped."),
        rx.link("Back to the overview", href=routes.HOME),
    )
