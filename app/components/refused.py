"""The console's refusal: a page's content, or why the client may not see it and the way to sign in
(the state's side of the rule is app/console/state.py)."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.console.state import ConsoleState


def unless_refused(state: type[ConsoleState], content: rx.Component) -> rx.Component:
    """The page's content, or the refusal (with the way to sign in) when the client may not see it."""
    return rx.cond(
        state.refused != "",
        rx.vstack(
            rx.callout(state.refused, color_scheme="red", id="console-refused"),
            rx.link("Sign in", href=routes.SIGN_IN, id="console-sign-in"),
        ),
        rx.vstack(rx.cond(state.viewer != "", rx.text("Signed in as ", state.viewer, size="1", id="console-viewer")),
                  content, width="100%"),
    )
