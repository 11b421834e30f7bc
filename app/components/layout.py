"""The shared page frame: a header with the product name and navigation, then the page body."""

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


def layout(*children: rx.Component) -> rx.Component:
    return rx.container(
        header(),
        rx.vstack(*children, spacing="4", padding_y="1.5em", width="100%"),
        size="3",
    )
