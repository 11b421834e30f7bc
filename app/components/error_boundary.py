"""The app's error boundary: a friendly page with a retry button instead of Reflex's stack dump.

The error itself reaches Sentry through React's root callbacks (`app/monitoring/entry.client.js`);
this only decides what the user sees. The default `on_error` (Reflex's round trip to the backend's
`frontend_exception_handler`) is kept.
"""

import reflex as rx
from reflex.components.base.error_boundary import ErrorBoundary
from reflex.vars.base import Var

# Inside `fallback_render`, Reflex names the boundary's render props `event_args`.
_RETRY = Var(_js_expr="event_args.resetErrorBoundary")


def fallback() -> rx.Component:
    return rx.el.div(
        rx.el.h2("Something went wrong on this page.", id="error-fallback-title"),
        rx.el.p("The error has been reported. Try again, or go back to the overview."),
        rx.el.div(
            rx.el.button("Try again", id="error-fallback-retry", custom_attrs={"onClick": _RETRY}),
            rx.el.a("Overview", href="/"),
            style={"display": "flex", "gap": "1rem", "alignItems": "center"},
        ),
        role="alert",
        style={"maxWidth": "40rem", "margin": "4rem auto", "padding": "1.5rem", "fontFamily": "system-ui, sans-serif"},
    )


def error_boundary(_stateful: bool) -> rx.Component:
    return ErrorBoundary.create(fallback_render=fallback())


APP_WRAP_KEY = (55, "ErrorBoundary")  # Reflex's own key: this replaces its boundary
