"""The shared page frame: a header with the product name and navigation, then the page body; and
the same navigation in plain elements for the error boundary's page (`plain_header`)."""

import reflex as rx

from app import routes


def header() -> rx.Component:
    return rx.hstack(
        rx.link(rx.heading("Lookout", size="5"), href=routes.HOME, underline="none"),
        rx.hstack(
            *[rx.link(label, href=path) for label, path in routes.NAVIGATION],
            spacing="4",
        ),
        justify="between",
        align="center",
        width="100%",
        padding_y="0.75em",
        border_bottom="1px solid var(--gray-a5)",
        id="lookout-header",
    )


def plain_header() -> rx.Component:
    """`header`'s navigation where Radix Themes and the client router cannot be relied on: the error
    boundary's page, drawn outside the theme (its app wrap is outside Radix's). Each link loads its
    page afresh (`reload_document`: `rx.el.a` is React Router's Link in Reflex 0.10), as a client-side
    navigation would leave the boundary showing its fallback."""
    link = {"color": "var(--accent-11, #0d74ce)", "textDecoration": "underline", "textUnderlineOffset": "0.2em"}
    return rx.el.nav(
        rx.el.a("Lookout", href=routes.HOME, reload_document=True,
                style={"fontWeight": "700", "fontSize": "1.25rem", "color": "inherit"}),
        rx.el.div(
            *[rx.el.a(label, href=path, reload_document=True, style=link) for label, path in routes.NAVIGATION],
            style={"display": "flex", "gap": "1rem", "flexWrap": "wrap"},
        ),
        style={"display": "flex", "justifyContent": "space-between", "alignItems": "center", "gap": "1rem",
               "flexWrap": "wrap", "padding": "0.75rem 0", "borderBottom": "1px solid #d9d9d9"},
        id="lookout-plain-header",
    )


def layout(*children: rx.Component) -> rx.Component:
    return rx.container(
        header(),
        rx.vstack(*children, spacing="4", padding_y="1.5em", width="100%"),
        size="3",
    )
