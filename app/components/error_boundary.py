"""The app's error boundary: a friendly page with a retry button instead of Reflex's stack dump.

The error itself reaches Sentry through React's root callbacks (`app/monitoring/entry.client.js`);
this only decides what the user sees. The default `on_error` (Reflex's round trip to the backend's
`frontend_exception_handler`) is kept.
"""

import reflex as rx
from reflex.components.base.error_boundary import ErrorBoundary
from reflex.vars.base import Var

from app import routes
from app.components.layout import plain_header

# Inside `fallback_render`, Reflex names the boundary's render props `event_args`.
_RETRY = Var(_js_expr="event_args.resetErrorBoundary")


def fallback() -> rx.Component:
    """The page in place of one that failed to render: the console's navigation (links that load
    their page afresh), what happened, and a retry. Plain elements: the boundary is outside Radix
    Themes' wrap, so its components would be unstyled here."""
    button = {"padding": "0.4rem 0.9rem", "borderRadius": "6px", "border": "1px solid #0d74ce", "background": "#0d74ce",
              "color": "white", "cursor": "pointer", "font": "inherit"}
    link = {"color": "#0d74ce", "textDecoration": "underline", "textUnderlineOffset": "0.2em"}
    return rx.el.div(
        plain_header(),
        rx.el.div(
            rx.el.h2("Something went wrong on this page.", id="error-fallback-title",
                     style={"fontSize": "1.5rem", "fontWeight": "700", "margin": "0 0 0.75rem"}),
            rx.el.p("The error has been reported, with what led to it: there is no need to report it yourself. "
                    "Try the page again, or go on to another one.", id="error-fallback-reported",
                    style={"margin": "0 0 1rem"}),
            rx.el.div(
                rx.el.button("Try again", id="error-fallback-retry", custom_attrs={"onClick": _RETRY}, style=button),
                rx.el.a("Overview", href=routes.HOME, reload_document=True, id="error-fallback-home", style=link),
                rx.el.a("Issues", href=routes.ISSUES, reload_document=True, id="error-fallback-issues", style=link),
                style={"display": "flex", "gap": "1rem", "alignItems": "center"},
            ),
            role="alert",
            style={"padding": "1.5rem 0"},
        ),
        style={"maxWidth": "52rem", "margin": "0 auto", "padding": "0 1rem", "fontFamily": "system-ui, sans-serif"},
    )


def error_boundary(_stateful: bool) -> rx.Component:
    return ErrorBoundary.create(fallback_render=fallback())


APP_WRAP_KEY = (55, "ErrorBoundary")  # Reflex's own key: this replaces its boundary
