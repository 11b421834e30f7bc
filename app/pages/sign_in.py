"""`/signin`: sign in to use the console from another machine (app/console/accounts.py).

The form is posted to the backend as a page navigation (app/inbox/json_api.py), which sets the session
as an HttpOnly cookie and sends the browser on to the issues; a refusal comes back here as
`?problem=`."""

from __future__ import annotations

import reflex as rx

from app import routes
from app.components.layout import layout
from app.components.page import page_at
from app.inbox.json_api import SIGN_IN, SIGN_OUT

TITLE = "Sign in · Lookout"
PROBLEMS = {
    "mismatch": "That name and password do not match a console user.",
    "throttled": "Too many failed sign-ins for this name or from this address: try again in {minutes} min.",
}


class SignInState(rx.State):
    problem: str = ""

    @rx.event
    def load(self) -> None:
        query = self.router.url.query_parameters
        minutes = query.get("minutes", "")
        self.problem = PROBLEMS.get(query.get("problem", ""), "").format(minutes=minutes if minutes.isdigit() else "15")


@page_at(routes.SIGN_IN, TITLE, on_load=SignInState.load)
def page() -> rx.Component:
    return layout(
        rx.heading("Sign in", size="7", id="page-title"),
        rx.text("From this machine the console is open; from elsewhere, sign in as a console user "
                "(added by whoever runs Lookout: ", rx.code("python -m app.console.accounts add NAME"), ")."),
        rx.el.form(
            rx.vstack(
                rx.input(name="name", placeholder="Name", id="sign-in-name", auto_complete="username"),
                rx.input(name="password", type="password", placeholder="Password", id="sign-in-password",
                         auto_complete="current-password"),
                rx.button("Sign in", type="submit", id="sign-in-submit"),
                rx.cond(SignInState.problem != "", rx.callout(SignInState.problem, color_scheme="red", id="sign-in-problem")),
                spacing="3", width="20em",
            ),
            **native_post("sign-in-form", SIGN_IN),
        ),
        rx.el.form(rx.button("Sign out", type="submit", variant="ghost", id="sign-out"),
                   **native_post("sign-out-form", SIGN_OUT)),
    )


def native_post(form_id: str, action: str) -> dict[str, object]:
    """A form's props to POST it as a page navigation (so the answer's cookie and redirect apply).
    Reflex's forms always cancel the browser's submit; `form.submit()` posts without that event."""
    return {"id": form_id, "action": action, "method": "post",
            "on_submit": rx.call_script(f"document.getElementById('{form_id}').submit()")}
