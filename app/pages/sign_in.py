"""`/signin`: sign in to use the console from another machine (app/inbox/accounts.py)."""

from __future__ import annotations

import anyio.to_thread
import reflex as rx

from app import routes
from app.components.console import ConsoleState, accounts
from app.components.layout import layout

TITLE = "Sign in · Lookout"


class SignInState(ConsoleState, rx.State):
    problem: str = ""

    async def _read(self) -> None:
        pass

    @rx.event
    async def sign_in(self, form: dict[str, str]):
        found = await anyio.to_thread.run_sync(
            accounts().authenticate, str(form.get("name", "")), str(form.get("password", ""))
        )
        if found is None:
            self.problem = "That name and password do not match a console user."
            return None
        self.problem = ""
        self.session_token = await anyio.to_thread.run_sync(accounts().start_session, found)
        return rx.redirect(routes.ISSUES)

    @rx.event
    async def sign_out(self):
        if self.session_token:
            await anyio.to_thread.run_sync(accounts().end_session, self.session_token)
        self.session_token = ""
        return rx.redirect(routes.SIGN_IN)


def page() -> rx.Component:
    return layout(
        rx.heading("Sign in", size="7", id="page-title"),
        rx.text("From this machine the console is open; from elsewhere, sign in as a console user "
                "(added by whoever runs Lookout: `python -m app.inbox.accounts add NAME`)."),
        rx.form(
            rx.vstack(
                rx.input(name="name", placeholder="Name", id="sign-in-name", auto_complete="username"),
                rx.input(name="password", type="password", placeholder="Password", id="sign-in-password",
                         auto_complete="current-password"),
                rx.button("Sign in", type="submit", id="sign-in-submit"),
                rx.cond(SignInState.problem != "", rx.callout(SignInState.problem, color_scheme="red", id="sign-in-problem")),
                spacing="3", width="20em",
            ),
            on_submit=SignInState.sign_in,
        ),
        rx.button("Sign out", on_click=SignInState.sign_out, variant="ghost", id="sign-out"),
    )
